import Foundation
import HTTPServer
import Coordination

/// Log severities, in increasing order.
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warning, error

    /// Orders levels by severity: `debug` < `info` < `warning` < `error`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Writes one JSON object per line: `time`, `level`, `msg`, then the given fields.
///
/// Fields are values chosen by the caller; never pass a credential, a token or message text.
public struct Logger: Sendable {
    /// The lowest level written.
    public let level: LogLevel
    private let sink: @Sendable (String) -> Void

    /// A logger writing lines to `sink` (standard error by default).
    public init(level: LogLevel, sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.level = level
        self.sink = sink
    }

    /// Writes a line to standard error, whole, without blocking the caller (see ``LogWriter``).
    public static let standardError: @Sendable (String) -> Void = { line in
        LogWriter.shared.write(line)
    }

    /// Logs `message` with `fields` at `level`, when enabled.
    public func log(_ level: LogLevel, _ message: String, _ fields: [String: any Sendable] = [:]) {
        guard level >= self.level else { return }
        var line = JSONLine()
        line.append("time", RFC3339.string(from: Date()))
        line.append("level", level.rawValue)
        line.append("msg", message)
        for key in fields.keys.sorted() where key != "time" && key != "level" && key != "msg" {
            line.append(key, fields[key]!)
        }
        sink(line.finish())
    }

    /// Logs at debug level.
    public func debug(_ message: String, _ fields: [String: any Sendable] = [:]) { log(.debug, message, fields) }
    /// Logs at info level.
    public func info(_ message: String, _ fields: [String: any Sendable] = [:]) { log(.info, message, fields) }
    /// Logs at warning level.
    public func warning(_ message: String, _ fields: [String: any Sendable] = [:]) { log(.warning, message, fields) }
    /// Logs at error level.
    public func error(_ message: String, _ fields: [String: any Sendable] = [:]) { log(.error, message, fields) }
}
