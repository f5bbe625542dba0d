import Foundation
import Postgres

/// The log lines saying whether the database can be reached: a debug line for each failed attempt, one
/// "database unreachable" error line (naming what was tried, libpq's error and what to do) once an outage lasts,
/// repeated as ``OutageReport`` allows, and "database reachable" when a reported outage ends.
struct DatabaseReachabilityLog {
    /// What to do about an unreachable database.
    static let hint = "start PostgreSQL, or fix DATABASE_URL; `make run` without DATABASE_URL starts a private cluster"

    /// Where connections go (``PostgresConfiguration/target``): never the password.
    let target: String
    let logger: Logger
    private var report = OutageReport()

    init(target: String, logger: Logger) {
        self.target = target
        self.logger = logger
    }

    /// Whether `error` means no connection could be had, rather than a statement the database refused.
    static func isUnreachable(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.kind == .connection || error.kind == .poolTimeout
    }

    /// Logs a failed attempt, begun at `began`, that could not reach the database.
    mutating func failed(_ error: any Error, began: ContinuousClock.Instant) {
        let text = Self.firstLine(of: error)
        if report.failed(began: began, at: .now) {
            logger.error("database unreachable", ["target": target, "error": text, "hint": Self.hint])
        } else {
            logger.debug("database not reachable yet", ["target": target, "error": text])
        }
    }

    /// Notes that the database answered; logs so when an outage had been reported.
    mutating func reached() {
        if report.succeeded() { logger.info("database reachable", ["target": target]) }
    }

    /// libpq's message without its continuation lines (the "Is the server running…?" that follows a refusal).
    static func firstLine(of error: any Error) -> String {
        let text = (error as? PostgresError)?.message ?? String(describing: error)
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.trimmingCharacters(in: .whitespaces)
    }
}
