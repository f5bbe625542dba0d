import App
import Feeds
import Foundation
import Postgres
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Operations under hostile conditions: metrics only for their scraper, a log nobody reads, libmicrohttpd's own
/// complaints, and bookkeeping that clients cannot grow without bound.
@Suite("Operations hardening", .timeLimit(.minutes(10)))
struct OperationsHardeningTests {
    @Test func metricsAreServedOnlyToTheBearerOfMetricsToken() async throws {
        let app = try await TestApp.start()
        #expect(try await app.call("GET", "/metrics").status == 401)
        #expect(try await app.call("GET", "/metrics", token: "not-the-metrics-token-000").status == 401)
        let tenant = try await app.createTenant()
        #expect(try await app.call("GET", "/metrics", token: tenant.apiKey).status == 401)
        #expect(try await app.metrics().status == 200)
        await app.stop()
        // Without METRICS_TOKEN the route does not exist at all.
        let server = try await SignalTests.launch()
        #expect(try await request(port: server.port, "GET", "/metrics").status == 404)
        #expect(server.earlyLog.contains(#""msg":"metrics off""#))
        server.child.signal(SIGTERM)
        _ = try await onThread { server.child.wait() }
    }

    /// The service's standard error is a pipe that nobody reads (a stalled log shipper): requests are still
    /// answered, and the lines that did not fit are counted.
    @Test func aLogNobodyReadsDoesNotStallRequests() async throws {
        let server = try await SignalTests.launch(extra: ["METRICS_TOKEN": TestApp.metricsToken, "LOG_BUFFER_BYTES": "65536"])
        // From here on nobody reads the child's output: the pipe (64 KiB) fills after a few hundred access-log lines.
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0 ..< 4 {
                group.addTask {
                    var ok = 0
                    // Not a probe: probes are access-logged at debug level only, and this needs lines at info.
                    for _ in 0 ..< 500 where try await request(port: server.port, "GET", "/no-such-page").status == 404 { ok += 1 }
                    return ok
                }
            }
            var answered = 0
            for try await ok in group { answered += ok }
            #expect(answered == 2000)
        }
        #expect(ContinuousClock.now - started < .seconds(60))
        let metrics = try await request(port: server.port, "GET", "/metrics",
                                        headers: ["Authorization": "Bearer \(TestApp.metricsToken)"])
        #expect((MetricsTests.sample(metrics.text, #"switchboard_log_lines_dropped_total{source="service"}"#) ?? 0) > 0)
        server.child.signal(SIGTERM)
        let status = try await onThread { () -> Int32 in
            _ = server.child.readToEnd()
            return server.child.wait()
        }
        #expect(status == 0)
    }

    /// Malformed requests make libmicrohttpd complain; its lines arrive in the JSON log like every other line.
    @Test func libmicrohttpdsOwnLinesAreJSON() async throws {
        let server = try await SignalTests.launch()
        for text in ["GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", "GARBAGE\r\n\r\n", "GET /x HTTP/9.9\r\n\r\n",
                     "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Long: " + String(repeating: "a", count: 4000) + "\r\n", count: 8) + "\r\n"] {
            _ = try? await rawRequest(port: server.port, text)
        }
        server.child.signal(SIGTERM)
        let log = try await onThread { server.child.readToEnd() }
        _ = try await onThread { server.child.wait() }
        let lines = log.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not JSON: \(line)")
        }
    }

    /// Any token may be sent as a method; the metrics count the ones the API knows by name and every other as
    /// `OTHER`, so invented methods cannot grow the series (or the memory behind them) without bound.
    @Test func inventedMethodsShareOneSeries() async throws {
        let app = try await TestApp.start()
        for n in 0 ..< 40 { _ = try await request(port: app.port, "BREW\(n)", "/no-such-page") }
        _ = try await request(port: app.port, "GET", "/no-such-page")
        let text = try await app.metrics().text
        let series = text.split(separator: "\n").filter { $0.hasPrefix("switchboard_http_requests_total{route=\"unmatched\"") }
        #expect(!text.contains("BREW"), "\(series)")
        let other = series.filter { $0.contains(#"method="OTHER""#) }.compactMap { Double($0.split(separator: " ").last ?? "") }
        #expect(other.reduce(0, +) == 40, "\(series)")
        #expect(series.contains { $0.contains(#"method="GET""#) }, "\(series)")
        await app.stop()
    }

    /// Forged cursors name pages that would never be read again; the pages kept in memory stay within their bound
    /// however many distinct keys clients send.
    @Test func theFeedPagesKeptAreBoundedWhateverKeysClientsSend() async throws {
        let database = try await TestDatabase.create()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 4)
        _ = try await Migrator.apply(Migrations.all, pool: pool)
        let tenant = UUID()
        _ = try await pool.withConnection { try await $0.query("INSERT INTO tenants (id, name) VALUES ($1::uuid, 'T')", [tenant]) }
        let service = FeedService(store: FeedStore(pool: pool), maxCachedPages: 50)
        let feed = FeedAddress(tenantID: tenant, key: "news")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0 ..< 4 {
                group.addTask {
                    for n in 0 ..< 1500 {
                        let cursor = FeedCursor(micros: Int64(worker * 1_000_000 + n), id: UUID())
                        _ = try? await service.page(FeedPageKey(feed: feed, limit: 1 + n % 100, cursor: cursor))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(service.cachedPages <= 50, "kept \(service.cachedPages) pages for 6,000 distinct requests")
        await pool.close()
        await database.drop()
    }
}
