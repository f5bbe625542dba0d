import Foundation
import Testing
import TestSupport

@Suite("Feeds: pages, caching, writes, isolation", .timeLimit(.minutes(10)))
struct FeedsEndToEndTests {
    /// A tenant with an API key, an agent and a customer.
    struct Actors {
        let apiKey: String
        let agent: String
        let customer: String
    }

    static func actors(_ app: TestApp, tenant: String = "T") async throws -> Actors {
        let created = try await app.createTenant(tenant)
        return Actors(apiKey: created.apiKey,
                      agent: try await app.createSession(apiKey: created.apiKey, user: "agent-1", role: "agent"),
                      customer: try await app.createSession(apiKey: created.apiKey, user: "cust-1", role: "customer"))
    }

    static func post(_ app: TestApp, _ token: String, feed: String, title: String, extra: String = "") async throws -> RawResponse {
        try await app.call("POST", "/v1/feeds/\(feed)/items", token: token, body: #"{"title":"\#(title)"\#(extra)}"#)
    }

    @Test func writesReadsAndErrors() async throws {
        let app = try await TestApp.start()
        let who = try await Self.actors(app)
        let created = try await Self.post(app, who.apiKey, feed: "news", title: "Hello",
                                          extra: #","body":"World","url":"https://example.com/a","published_at":"2026-01-02T03:04:05.123456Z""#)
        #expect(created.status == 201)
        let item = try created.json()
        let id = try #require(item["id"] as? String)
        #expect(item["title"] as? String == "Hello")
        #expect(item["published_at"] as? String == "2026-01-02T03:04:05.123456Z")
        #expect(item["image_url"] is NSNull)

        let page = try await app.call("GET", "/v1/feeds/news", token: who.customer)
        #expect(page.status == 200)
        #expect(page.header("ETag") != nil)
        #expect(page.header("Cache-Control") == "private, no-cache")
        let json = try page.json()
        #expect((json["items"] as? [[String: Any]])?.count == 1)
        #expect(json["next_cursor"] is NSNull)
        #expect(json["has_more"] as? Bool == false)

        // Agents write; customers may not (403); a write is visible at once.
        #expect(try await Self.post(app, who.customer, feed: "news", title: "nope").status == 403)
        #expect(try await Self.post(app, who.agent, feed: "news", title: "Second").status == 201)
        let patched = try await app.call("PATCH", "/v1/feeds/news/items/\(id)", token: who.agent,
                                         body: #"{"title":"Hello again","url":null}"#)
        #expect(patched.status == 200)
        #expect(try patched.json()["url"] is NSNull)
        let after = try await app.call("GET", "/v1/feeds/news", token: who.customer).json()
        let titles = (after["items"] as? [[String: Any]])?.compactMap { $0["title"] as? String }
        #expect(titles == ["Second", "Hello again"])
        #expect(try await app.call("DELETE", "/v1/feeds/news/items/\(id)", token: who.apiKey).status == 204)
        #expect(try await app.call("DELETE", "/v1/feeds/news/items/\(id)", token: who.apiKey).status == 404)
        #expect(try await app.call("PATCH", "/v1/feeds/news/items/\(UUID())", token: who.agent, body: #"{"title":"x"}"#).status == 404)
        #expect(try await app.call("DELETE", "/v1/feeds/news/items/\(id)", token: who.customer).status == 403)

        // Errors name what is wrong.
        let unknown = try await app.call("GET", "/v1/feeds/nothing-here", token: who.customer)
        #expect(unknown.status == 404)
        #expect(unknown.header("Content-Type") == "application/problem+json")
        for (query, parameter) in [("limit=0", "limit"), ("limit=101", "limit"), ("limit=x", "limit"), ("cursor=bogus", "cursor")] {
            let bad = try await app.call("GET", "/v1/feeds/news?\(query)", token: who.customer)
            #expect(bad.status == 400)
            #expect(try bad.json()["parameter"] as? String == parameter)
        }
        #expect(try await app.call("GET", "/v1/feeds/bad%20key", token: who.customer).status == 400)
        for (body, parameter) in [(#"{}"#, "title"), (#"{"title":""}"#, "title"), (#"{"title":"a","url":"ftp://x"}"#, "url"),
                                  (#"{"title":"a","image_url":"not a url"}"#, "image_url")] {
            let bad = try await app.call("POST", "/v1/feeds/news/items", token: who.agent, body: body)
            #expect(bad.status == 400, "\(body)")
            #expect(try bad.json()["parameter"] as? String == parameter)
        }
        #expect(try await app.call("GET", "/v1/feeds/news").status == 401)
        await app.stop()
    }

    @Test func anotherTenantsFeedIsNotFound() async throws {
        let app = try await TestApp.start()
        let a = try await Self.actors(app, tenant: "A")
        let b = try await Self.actors(app, tenant: "B")
        #expect(try await Self.post(app, a.apiKey, feed: "private", title: "A only").status == 201)
        let item = try await app.call("GET", "/v1/feeds/private", token: a.customer).json()
        let id = try #require((item["items"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(try await app.call("GET", "/v1/feeds/private", token: b.customer).status == 404)
        #expect(try await app.call("GET", "/v1/feeds/private", token: b.apiKey).status == 404)
        #expect(try await app.call("PATCH", "/v1/feeds/private/items/\(id)", token: b.agent, body: #"{"title":"x"}"#).status == 404)
        #expect(try await app.call("DELETE", "/v1/feeds/private/items/\(id)", token: b.apiKey).status == 404)
        await app.stop()
    }

    /// A read answered in the request's task after the page was not in memory (the principal found there carried
    /// on), and one answered from memory, each take exactly one request from the caller's allowance.
    @Test func aReadTakesOneRequestFromTheAllowanceWhicheverWayItIsAnswered() async throws {
        let app = try await TestApp.start(rateLimitPerMinute: 6)
        let who = try await Self.actors(app)
        #expect(try await Self.post(app, who.apiKey, feed: "news", title: "Hello").status == 201)
        func remaining(_ response: RawResponse) -> Int? {
            response.header("RateLimit")?.split(separator: ";").first { $0.hasPrefix("r=") }.flatMap { Int($0.dropFirst(2)) }
        }
        // The session's token is looked up once, and is in memory from then on.
        let current = try await app.call("GET", "/v1/sessions/current", token: who.customer)
        #expect(remaining(current) == 5)
        let queries = try await Self.feedQueries(app)
        let cold = try await app.call("GET", "/v1/feeds/news", token: who.customer)
        #expect(cold.status == 200 && remaining(cold) == 4)
        #expect(try await Self.feedQueries(app) == queries + 1) // not in memory: read in the task
        let hot = try await app.call("GET", "/v1/feeds/news", token: who.customer)
        #expect(hot.status == 200 && remaining(hot) == 3)
        #expect(try await Self.feedQueries(app) == queries + 1) // answered from memory
        await app.stop()
    }

    @Test func notModifiedWhenTheETagMatches() async throws {
        let app = try await TestApp.start()
        let who = try await Self.actors(app)
        _ = try await Self.post(app, who.apiKey, feed: "deals", title: "One")
        let first = try await app.call("GET", "/v1/feeds/deals?limit=5", token: who.customer)
        let etag = try #require(first.header("ETag"))
        for _ in 0 ..< 2 { // the second is answered from memory, on the server's own thread
            let again = try await app.call("GET", "/v1/feeds/deals?limit=5", token: who.customer, headers: ["If-None-Match": etag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == etag)
            #expect(again.header("Cache-Control") == "private, no-cache")
        }
        _ = try await Self.post(app, who.apiKey, feed: "deals", title: "Two")
        let changed = try await app.call("GET", "/v1/feeds/deals?limit=5", token: who.customer, headers: ["If-None-Match": etag])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != etag)
        await app.stop()
    }

    @Test func pagingWhileItemsAreInsertedSeesEveryOriginalItemOnce() async throws {
        let app = try await TestApp.start()
        let who = try await Self.actors(app)
        _ = try await app.database.query("""
            WITH t AS (SELECT id FROM tenants LIMIT 1),
                 f AS (INSERT INTO feeds (tenant_id, key) SELECT id, 'big' FROM t RETURNING id)
            INSERT INTO feed_items (feed_id, title, published_at)
            SELECT f.id, 'item ' || n, now() - n * interval '1 second' FROM f, generate_series(1, 250) n
            """)
        let original = Set(try await app.database.query("SELECT id::text AS id FROM feed_items").map { try $0.decode("id", as: String.self) })
        #expect(original.count == 250)
        let writer = Task {
            for n in 0 ..< 40 { _ = try await Self.post(app, who.agent, feed: "big", title: "new \(n)") }
        }
        var seen: [String] = []
        var cursor: String?
        repeat {
            let path = "/v1/feeds/big?limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try await app.call("GET", path, token: who.customer).json()
            seen += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = page["next_cursor"] as? String
        } while cursor != nil
        try await writer.value
        let seenOriginal = seen.filter { original.contains($0) }
        #expect(seenOriginal.count == 250)
        #expect(Set(seenOriginal) == original)
        #expect(Set(seen).count == seen.count)
        await app.stop()
    }

    @Test func fiveHundredConcurrentColdReadsCostOneQuery() async throws {
        let app = try await TestApp.start()
        let who = try await Self.actors(app)
        // The item goes in by SQL, not through the API: a write's change notice arriving late (its writer waits for
        // it only so long) would retire the page mid-test and cost a second query that has nothing to do with dedup.
        _ = try await app.database.query("""
            WITH t AS (SELECT id FROM tenants LIMIT 1),
                 f AS (INSERT INTO feeds (tenant_id, key) SELECT id, 'launch' FROM t RETURNING id)
            INSERT INTO feed_items (feed_id, title, published_at) SELECT f.id, 'Welcome', now() FROM f
            """)
        _ = try await app.call("GET", "/v1/sessions/current", token: who.customer) // warm the token, not the feed
        let before = try await Self.feedQueries(app)
        let reconnectsBefore = Self.listenerReconnects(app)
        let port = app.port
        let token = who.customer
        let statuses = try await onThread { () -> [Int] in
            let sockets = try (0 ..< 500).map { _ in try RawSocket(port: port) }
            for socket in sockets {
                try socket.send("GET /v1/feeds/launch?limit=10 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            }
            return try sockets.map { try $0.readResponse(timeout: 30).status }
        }
        #expect(statuses.count == 500 && statuses.allSatisfy { $0 == 200 })
        // One query for all of them. Only a listener that reconnected meanwhile (its liveness check missed on a
        // loaded machine: notices may have been lost) rightly retires the page, and the reads after it load it again.
        let reconnects = Self.listenerReconnects(app) - reconnectsBefore
        let queries = try await Self.feedQueries(app) - before
        #expect(queries >= 1 && queries <= 1 + reconnects, "\(queries) page queries; the listener reconnected \(reconnects) times")
        await app.stop()
    }

    /// How often the app's change-notice listener came back after a gap (each retires every cached page).
    static func listenerReconnects(_ app: TestApp) -> Int {
        app.log.all.filter { $0.contains("change-notice listener reconnected") }.count
    }

    /// Page queries counted by Postgres itself.
    static func feedQueries(_ app: TestApp) async throws -> Int {
        try await app.database.statementCalls(like: "%FROM feeds f%LEFT JOIN LATERAL%")
    }
}

@Suite("Feeds across replicas", .timeLimit(.minutes(10)))
struct FeedsAcrossProcessesTests {
    /// A write acknowledged by A reaches B's cache at once in the normal case (A waits for its own change notice,
    /// B marks the feed stale the moment it reads the notice); under
    /// CPU contention B can still be late, so the test bounds the staleness at 2 s rather than claiming B's very next
    /// read (which held in most, not all, runs on this 2-core machine). B's cache has no time limit (only notices and
    /// a listener's reconnect drop its pages), so a page that turns fresh within the bound was dropped by the notice.
    @Test func aWriteThroughOneProcessReachesAnotherByItsNotice() async throws {
        let database = try await TestDatabase.create()
        let replicas = try await database.launchReplicas()
        let (a, b) = (replicas[0], replicas[1])
        func call(_ port: Int, _ method: String, _ path: String, _ token: String, _ body: String? = nil) async throws -> RawResponse {
            try await request(port: port, method, path, headers: ["Authorization": "Bearer \(token)"], body: body)
        }
        let tenant = try await call(a.port, "POST", "/v1/admin/tenants", TestApp.adminToken, #"{"name":"R"}"#).json()
        let apiKey = try #require(tenant["api_key"] as? String)
        for round in 0 ..< 5 {
            _ = try await call(b.port, "GET", "/v1/feeds/shared", apiKey) // B caches what it has (or the 404)
            _ = try await call(b.port, "GET", "/v1/feeds/shared", apiKey)
            let created = try await call(a.port, "POST", "/v1/feeds/shared/items", apiKey, #"{"title":"round \#(round)"}"#)
            #expect(created.status == 201)
            let start = ContinuousClock.now
            let fresh = await eventually(timeout: .seconds(2)) {
                guard let seen = try? await call(b.port, "GET", "/v1/feeds/shared", apiKey), seen.status == 200 else { return false }
                let titles = (try? seen.json()["items"] as? [[String: Any]])?.compactMap { $0["title"] as? String } ?? []
                return titles.first == "round \(round)"
            }
            #expect(fresh, "round \(round): B still served the old page after \(ContinuousClock.now - start)")
        }
        try await database.stop(replicas)
    }
}
