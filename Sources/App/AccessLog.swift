import HTTPServer

/// Writes access-log entries as JSON lines at info level.
enum AccessLog {
    static func write(_ entry: AccessLogEntry, to logger: Logger) {
        guard logger.level <= .info else { return }
        logger.info("request", [
            "request_id": entry.requestID,
            "method": entry.method,
            "route": entry.route ?? "-",
            "status": entry.status,
            "duration_ms": (entry.duration * 1_000_000).rounded() / 1000,
        ])
    }
}
