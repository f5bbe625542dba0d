import HTTPServer

/// Writes access-log entries as JSON lines at info level, except probes: `GET /healthz` and `GET /readyz` are
/// written at debug level, so that a load balancer polling them does not fill the log (metrics still count them).
enum AccessLog {
    static func write(_ entry: AccessLogEntry, to logger: Logger) {
        let level = level(of: entry)
        guard logger.level <= level else { return }
        // In key order, as `Logger.log` would sort them.
        logger.log(level, "request") { line in
            line.append("duration_ms", (entry.duration * 1_000_000).rounded() / 1000)
            line.append("method", entry.method)
            line.append("request_id", entry.requestID)
            line.append("route", entry.route ?? "-")
            line.append("status", entry.status)
        }
    }

    /// Debug for a health or readiness probe, info for every other request.
    static func level(of entry: AccessLogEntry) -> LogLevel {
        guard entry.method == "GET", let route = entry.route else { return .info }
        return route == "/healthz" || route == "/readyz" ? .debug : .info
    }
}
