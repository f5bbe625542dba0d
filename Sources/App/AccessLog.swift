import HTTPServer

/// Writes access-log entries as JSON lines at info level.
enum AccessLog {
    static func write(_ entry: AccessLogEntry, to logger: Logger) {
        guard logger.level <= .info else { return }
        // In key order, as `Logger.log` would sort them.
        logger.log(.info, "request", inOrder: [
            ("duration_ms", (entry.duration * 1_000_000).rounded() / 1000),
            ("method", entry.method),
            ("request_id", entry.requestID),
            ("route", entry.route ?? "-"),
            ("status", entry.status),
        ])
    }
}
