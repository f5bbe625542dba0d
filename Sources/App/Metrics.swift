import Coordination
import HTTPServer

/// The service's own counters and histograms (requests by route template, database statements), rendered with the
/// gauges read from the components at scrape time. Labels use route templates, never raw paths.
final class Metrics: Sendable {
    struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    struct RouteKey: Hashable {
        let route: String
        let method: String
    }

    struct Store {
        var requests: [RequestKey: UInt64] = [:]
        var durations: [RouteKey: Histogram] = [:]
        var queries = Histogram()
        var failedQueries: UInt64 = 0
    }

    /// Guards the counters and histograms.
    private let store = Locked(Store())

    /// Records one finished request.
    func record(_ entry: AccessLogEntry) {
        let route = entry.route ?? "unmatched"
        store.withLock { store in
            store.requests[RequestKey(route: route, method: entry.method, status: entry.status), default: 0] += 1
            store.durations[RouteKey(route: route, method: entry.method), default: Histogram()].observe(entry.duration)
        }
    }

    /// Records one database statement.
    func recordQuery(_ duration: Duration, succeeded: Bool) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        store.withLock { store in
            store.queries.observe(seconds)
            if !succeeded { store.failedQueries += 1 }
        }
    }

    /// The stored series in the Prometheus text format.
    func renderStored() -> [String] {
        let store = store.withLock { $0 }
        var lines = ["# HELP switchboard_http_requests_total HTTP requests by route template, method and status.",
                     "# TYPE switchboard_http_requests_total counter"]
        for (key, value) in store.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            lines.append("switchboard_http_requests_total{route=\"\(Metrics.escape(key.route))\",method=\"\(key.method)\",status=\"\(key.status)\"} \(value)")
        }
        lines += ["# HELP switchboard_http_request_duration_seconds Time from arrival to response, by route template and method.",
                  "# TYPE switchboard_http_request_duration_seconds histogram"]
        for (key, histogram) in store.durations.sorted(by: { ($0.key.route, $0.key.method) < ($1.key.route, $1.key.method) }) {
            lines += histogram.lines("switchboard_http_request_duration_seconds",
                                     "route=\"\(Metrics.escape(key.route))\",method=\"\(key.method)\"")
        }
        lines += ["# HELP switchboard_db_query_duration_seconds Database statement durations.",
                  "# TYPE switchboard_db_query_duration_seconds histogram"]
        lines += store.queries.lines("switchboard_db_query_duration_seconds", "")
        lines += ["# HELP switchboard_db_query_failures_total Database statements that failed.",
                  "# TYPE switchboard_db_query_failures_total counter",
                  "switchboard_db_query_failures_total \(store.failedQueries)"]
        return lines
    }

    /// A gauge or counter with optional labels, as HELP/TYPE/sample lines.
    static func series(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Double)]) -> [String] {
        ["# HELP \(name) \(help)", "# TYPE \(name) \(type)"] + samples.map { sample in
            let value = sample.value == sample.value.rounded() && abs(sample.value) < 1e15
                ? String(Int64(sample.value)) : String(sample.value)
            return sample.labels.isEmpty ? "\(name) \(value)" : "\(name){\(sample.labels)} \(value)"
        }
    }

    /// Escapes a label value (backslash, quote, newline).
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
