import HTTPServer

/// Writes access-log entries as JSON lines at info level.
enum AccessLog {
    static func write(_ entry: AccessLogEntry, to logger: Logger) {
        guard logger.level <= .info else { return }
        // In key order, as `Logger.log` would sort them.
        logger.log(.info, "request") { line in
            line.append("duration_ms", (entry.duration * 1_000_000).rounded() / 1000)
            line.append("method", entry.method)
            line.append("request_id", entry.requestID)
            line.append("route", entry.route ?? "-")
            line.append("status", entry.status)
        }
    }
}
