import Accounts
import Coordination
import Feeds
import HTTPServer
import Interactions
import Postgres
import Webhooks

/// `GET /metrics`: the Prometheus text exposition of the service, for a scraper holding `METRICS_TOKEN` (as a bearer
/// token). Without that setting the route does not exist: an anonymous caller on the API port learns nothing.
struct MetricsRoute: Sendable {
    let metrics: Metrics
    let pool: PostgresPool
    let services: Services
    let servers: @Sendable () -> [HTTPServer]
    let token: String?
    let logDropped: @Sendable () -> Int

    static let version = "0.1.0"

    func register(on router: inout Router) {
        guard let token else { return }
        router.get("/metrics", AdminGuard(token: token).require { [self] _ in
            let lines = render() + (await webhookLines())
            return Response(status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8",
                                                   "Cache-Control": "no-store"],
                            body: Array((lines.joined(separator: "\n") + "\n").utf8))
        })
    }

    /// The webhook outbox's gauges (read from the database: they are the same on every replica) and this process's
    /// attempts by outcome. Without the database, the gauges are left out rather than failing the scrape.
    func webhookLines() async -> [String] {
        let delivery = services.webhooks
        var lines = Metrics.series("switchboard_webhook_attempts_total", "counter",
                                   "Webhook delivery attempts made by this process, by outcome.",
                                   AttemptResult.Outcome.allCases.map { outcome in
                                       ("outcome=\"\(outcome.rawValue)\"", Double(delivery.attemptsByOutcome[outcome] ?? 0))
                                   })
        let claims = delivery.claimsMade
        lines += Metrics.series("switchboard_webhook_claims_total", "counter",
                                "Outbox claims made by this process, by whether they found due messages.",
                                [(#"result="found""#, Double(claims.found)), (#"result="empty""#, Double(claims.empty))])
        if let backlog = try? await delivery.backlog() {
            lines += Metrics.series("switchboard_webhook_queue_depth", "gauge",
                                    "Webhook messages waiting for delivery to enabled endpoints (all replicas).",
                                    [("", Double(backlog.depth))])
            lines += Metrics.series("switchboard_webhook_oldest_undelivered_seconds", "gauge",
                                    "Age of the oldest webhook message waiting for delivery to an enabled endpoint.",
                                    [("", backlog.oldestSeconds)])
        }
        return lines
    }

    func render() -> [String] {
        var lines = metrics.renderStored()
        let servers = servers()
        lines += Metrics.series("switchboard_http_requests_in_flight", "gauge", "Requests whose responder is running.",
                                [("", Double(servers.reduce(0) { $0 + $1.requestsInFlight }))])
        lines += Metrics.series("switchboard_http_open_streams", "gauge",
                                "Streamed responses open, by daemon: event streams belong in their own; in the main one they slow API requests.",
                                zip(["main", "streams"], servers).map { ("daemon=\"\($0)\"", Double($1.openStreams)) })
        lines += Metrics.series("switchboard_http_slow_heads_cut_total", "counter",
                                "Connections closed for not sending a complete request head in time.",
                                [("", Double(servers.reduce(0) { $0 + $1.slowHeadsCut }))])
        lines += Metrics.series("switchboard_log_lines_dropped_total", "counter",
                                "Log lines dropped: the log's reader fell behind, or libmicrohttpd logged over its budget.",
                                [("source=\"service\"", Double(logDropped())),
                                 ("source=\"libmicrohttpd\"", Double(servers.reduce(0) { $0 + $1.libraryLogLinesDropped }))])
        lines += Metrics.series("switchboard_sse_subscribers", "gauge", "Live event-stream subscribers.",
                                [("", Double(services.interactionEvents.subscriberCount))])
        lines += Metrics.series("switchboard_inbox_streams", "gauge", "Agents' inbox streams open in this process.",
                                [("", Double(services.inbox.watcherCount))])
        lines += Metrics.series("switchboard_sse_dispatch_failures_total", "counter",
                                "Live event-log reads that failed and were retried.",
                                [("", Double(services.interactionEvents.dispatchFailures))])
        let caches: [(String, RequestCoordinatorStatistics)] = [("feeds", services.feeds.statistics),
                                                                ("tokens", services.tokens.statistics)]
        lines += Metrics.series("switchboard_coordinator_loads_total", "counter", "Loads started by a request coordinator.",
                                caches.map { ("coordinator=\"\($0.0)\"", Double($0.1.loadsStarted)) })
        lines += Metrics.series("switchboard_coordinator_joins_total", "counter", "Callers that joined a load in flight.",
                                caches.map { ("coordinator=\"\($0.0)\"", Double($0.1.callersJoined)) })
        lines += Metrics.series("switchboard_coordinator_cache_hits_total", "counter", "Answers served from the cache.",
                                caches.map { ("coordinator=\"\($0.0)\"", Double($0.1.cacheHits)) })
        let retention = services.retention.figures.withLock { $0 }
        lines += Metrics.series("switchboard_retention_purged_total", "counter",
                                "What retention deleted in this process: interactions, and rows of every kind with them.",
                                [("kind=\"interactions\"", Double(retention.interactionsPurged)),
                                 ("kind=\"rows\"", Double(retention.rowsPurged))])
        lines += Metrics.series("switchboard_erasures_completed_total", "counter",
                                "Erasures of users' data this process completed.",
                                [("", Double(services.erasuresCompleted.withLock { $0 }))])
        lines += Metrics.series("switchboard_retention_oldest_retained_seconds", "gauge",
                                "How long ago the oldest interaction kept under a tenant's retention ended (0: none).",
                                [("", retention.oldestRetainedSeconds ?? 0)])
        let pool = pool.stats
        lines += Metrics.series("switchboard_db_pool_connections", "gauge", "Pooled database connections by state.",
                                [("state=\"open\"", Double(pool.size)), ("state=\"in_use\"", Double(pool.inUse)),
                                 ("state=\"idle\"", Double(pool.idle))])
        lines += Metrics.series("switchboard_db_pool_waiters", "gauge", "Requests waiting for a database connection.",
                                [("", Double(pool.waiters))])
        lines += Metrics.series("switchboard_build_info", "gauge", "Build information.",
                                [("version=\"\(MetricsRoute.version)\",swift=\"6\"", 1)])
        return lines
    }
}
