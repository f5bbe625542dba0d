import Coordination
import Foundation
import HTTPServer

/// The service's own counters and histograms (requests by route template, database statements), rendered with the
/// gauges read from the components at scrape time. Labels use route templates, never raw paths.
final class Metrics: Sendable {
    struct RouteKey: Hashable {
        let route: String
        let method: String

        /// Lengths and end bytes rather than every byte: the routes are the server's own templates, a few dozen, so
        /// this tells most apart and equality settles the rest; every request is recorded with it.
        func hash(into hasher: inout Hasher) {
            hasher.combine(route.utf8.count << 8 | method.utf8.count)
            hasher.combine(route.utf8.last)
            hasher.combine(method.utf8.first)
        }
    }

    /// One route and method's requests by status, and their durations.
    struct RouteStats {
        var statuses = StatusCounts()
        var durations = Histogram()

        func adding(_ other: RouteStats) -> RouteStats {
            RouteStats(statuses: statuses.adding(other.statuses), durations: durations.adding(other.durations))
        }
    }

    struct Store {
        /// Each route's statistics, in the order first recorded, and where each route's are.
        private var stats: [RouteStats] = []
        private var slots: [RouteKey: Int] = [:]
        /// The route this shard recorded last, and its slot: a thread usually records the same route again (the same
        /// template and method strings), and finding it so costs two comparisons of identical strings instead of
        /// hashing a key.
        private var last: (key: RouteKey, slot: Int)?
        var queries = Histogram()
        var failedQueries: UInt64 = 0

        /// The statistics by route and method.
        var routes: [RouteKey: RouteStats] {
            slots.mapValues { stats[$0] }
        }

        /// Records a request to `route` (a template, or "unmatched") by `method` (a label, see `methodLabel`). The
        /// key is made only when the route is not the last one recorded.
        mutating func record(route: String, method: String, status: Int, duration: Double) {
            let slot: Int
            if let last, last.key.route == route, last.key.method == method {
                slot = last.slot
            } else {
                let key = RouteKey(route: route, method: method)
                if let known = slots[key] {
                    slot = known
                } else {
                    slot = stats.count
                    stats.append(RouteStats())
                    slots[key] = slot
                }
                last = (key, slot)
            }
            stats[slot].record(status: status, duration: duration)
        }
    }

    /// Each guards one share of the counters and histograms; a recording thread uses the share of its `ThreadIndex`,
    /// so the first eight threads to record (the libmicrohttpd threads among them) each have a share of their own and
    /// never wait for each other or pass its memory between cores. Scrapes add them up.
    private let shards: [Locked<Store>] = (0 ..< 8).map { _ in Locked(Store()) }

    private var store: Locked<Store> {
        shards[ThreadIndex.current % shards.count]
    }

    /// Records one finished request: its method, its route template (nil when none matched), its status and its time
    /// in seconds.
    func record(method: String, route: String?, status: Int, duration: Double) {
        let label = Self.methodLabel(method)
        store.withLock { $0.record(route: route ?? "unmatched", method: label, status: status, duration: duration) }
    }

    /// The method as a label: a client may send any token as its method, and each would otherwise become a series of
    /// its own (memory without bound, and a scrape that grows with every request).
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": method
        default: "OTHER"
        }
    }

    /// Records one database statement.
    func recordQuery(_ duration: Duration, succeeded: Bool) {
        let seconds = duration.inSeconds
        store.withLock { store in
            store.queries.observe(seconds)
            if !succeeded { store.failedQueries += 1 }
        }
    }

    /// All shards added up.
    private func total() -> (routes: [RouteKey: RouteStats], queries: Histogram, failedQueries: UInt64) {
        var total = (routes: [RouteKey: RouteStats](), queries: Histogram(), failedQueries: UInt64(0))
        for shard in shards {
            let part = shard.withLock { $0 }
            total.routes.merge(part.routes) { $0.adding($1) }
            total.queries = total.queries.adding(part.queries)
            total.failedQueries += part.failedQueries
        }
        return total
    }

    /// The stored series in the Prometheus text format.
    func renderStored() -> [String] {
        let store = total()
        var lines = ["# HELP switchboard_http_requests_total HTTP requests by route template, method and status.",
                     "# TYPE switchboard_http_requests_total counter"]
        let routes = store.routes.sorted { ($0.key.route, $0.key.method) < ($1.key.route, $1.key.method) }
        for (key, stats) in routes {
            for (status, count) in stats.statuses.sorted() {
                lines.append("switchboard_http_requests_total{route=\"\(Metrics.escape(key.route))\",method=\"\(key.method)\",status=\"\(status)\"} \(count)")
            }
        }
        lines += ["# HELP switchboard_http_request_duration_seconds Time from arrival to response, by route template and method.",
                  "# TYPE switchboard_http_request_duration_seconds histogram"]
        for (key, stats) in routes {
            lines += stats.durations.lines("switchboard_http_request_duration_seconds",
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
