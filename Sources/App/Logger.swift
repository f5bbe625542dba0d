import Foundation
import HTTPServer
import Coordination

/// Log severities, in increasing order.
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warning, error

    /// Orders levels by severity: `debug` < `info` < `warning` < `error`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.severity < rhs.severity
    }

    /// The level's rank (every request's access-log entry asks, so no array of all cases is built for it).
    private var severity: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        }
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

    /// Writes a line to standard error, whole, at once (the service logs through a ``LogWriter`` instead, which
    /// never blocks the caller).
    public static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Logs `message` with `fields` at `level`, when enabled.
    public func log(_ level: LogLevel, _ message: String, _ fields: [String: any Sendable] = [:]) {
        guard level >= self.level else { return }
        log(level, message, inOrder: fields.keys.sorted().map { ($0, fields[$0]!) })
    }

    /// Logs `message` with `fields` written in the order given.
    func log(_ level: LogLevel, _ message: String, inOrder fields: [(String, any Sendable)]) {
        log(level, message) { line in
            for (key, value) in fields where key != "time" && key != "level" && key != "msg" {
                line.append(key, value)
            }
        }
    }

    /// Logs `message` with the fields `writeFields` appends, in its order, after `time`, `level` and `msg`: the
    /// cheapest path, for lines written per request (typed appends, no dictionary, no boxed values, no casts).
    /// `writeFields` must not write those three keys, and should write its keys sorted, as `log` sorts them.
    func log(_ level: LogLevel, _ message: String, writingFields writeFields: (inout JSONLine) -> Void) {
        guard level >= self.level else { return }
        var line = JSONLine()
        line.append("time", microsecondsSince1970: Int64((Date().timeIntervalSince1970 * 1_000_000).rounded()))
        line.append("level", level.rawValue)
        line.append("msg", message)
        writeFields(&line)
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
