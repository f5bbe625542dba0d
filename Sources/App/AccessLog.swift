import HTTPServer

/// Writes access-log entries as JSON lines at info level, except probes: `GET /healthz` and `GET /readyz` are
/// written at debug level, so that a load balancer polling them does not fill the log (metrics still count them).
enum AccessLog {
    /// Writes the entry of `request`, which ended with `status` after `duration` seconds, if `logger` takes its level;
    /// the entry is made only then.
    static func write(_ request: Request, status: Int, duration: Double, to logger: Logger) {
        guard logger.level <= .info else { return }  // above every entry's level: nothing to tell apart
        let level = level(method: request.method, route: request.route)
        guard logger.level <= level else { return }
        write(AccessLogEntry(request, status: status, duration: duration), at: level, to: logger)
    }

    private static func write(_ entry: AccessLogEntry, at level: LogLevel, to logger: Logger) {
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
    static func level(method: String, route: String?) -> LogLevel {
        guard method == "GET", let route else { return .info }
        return route == "/healthz" || route == "/readyz" ? .debug : .info
    }
}
