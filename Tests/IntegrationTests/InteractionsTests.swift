import Foundation
import Interactions
import Testing

@Suite("Interactions: lifecycle, messages, isolation, idempotency", .timeLimit(.minutes(10)))
struct InteractionsEndToEndTests {
    struct People {
        let apiKey: String
        let alice: String   // customer
        let bob: String     // another customer
        let agent: String
    }

    static func people(_ app: TestApp, tenant: String = "T") async throws -> People {
        let created = try await app.createTenant(tenant)
        return People(apiKey: created.apiKey,
                      alice: try await app.createSession(apiKey: created.apiKey, user: "alice", role: "customer"),
                      bob: try await app.createSession(apiKey: created.apiKey, user: "bob", role: "customer"),
                      agent: try await app.createSession(apiKey: created.apiKey, user: "agent-7", role: "agent"))
    }

    static func start(_ app: TestApp, _ token: String, subject: String = "Card blocked") async throws -> String {
        let response = try await app.call("POST", "/v1/interactions", token: token, body: #"{"subject":"\#(subject)"}"#)
        #expect(response.status == 201)
        return try response.json()["id"] as? String ?? ""
    }

    @Test func aWholeInteraction() async throws {
        let app = try await TestApp.start()
        let who = try await Self.people(app)
        let created = try await app.call("POST", "/v1/interactions", token: who.alice, body: #"{"subject":"Card blocked"}"#)
        #expect(created.status == 201)
        let interaction = try created.json()
        let id = try #require(interaction["id"] as? String)
        #expect(interaction["state"] as? String == "started")
        #expect(interaction["customer_id"] as? String == "alice")
        #expect(interaction["ended_at"] is NSNull)

        let message = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"Hello?"}"#)
        #expect(message.status == 201)
        #expect(try message.json()["sender_role"] as? String == "customer")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"Hi, I am here."}"#).status == 201)
        let typing = try await app.call("POST", "/v1/interactions/\(id)/typing", token: who.agent, body: #"{"typing":true}"#)
        #expect(typing.status == 202)
        let media = try await app.call("POST", "/v1/interactions/\(id)/media", token: who.agent, body: #"{"kind":"video","state":"requested"}"#)
        #expect(media.status == 201)

        let messages = try await app.call("GET", "/v1/interactions/\(id)/messages?limit=1", token: who.alice).json()
        #expect((messages["items"] as? [[String: Any]])?.first?["text"] as? String == "Hello?")
        #expect(messages["has_more"] as? Bool == true)
        let cursor = try #require(messages["next_cursor"] as? String)
        let rest = try await app.call("GET", "/v1/interactions/\(id)/messages?cursor=\(cursor)", token: who.alice).json()
        #expect((rest["items"] as? [[String: Any]])?.map { $0["text"] as? String } == ["Hi, I am here."])

        let ended = try await app.call("POST", "/v1/interactions/\(id)/end", token: who.alice)
        #expect(ended.status == 200)
        #expect(try ended.json()["state"] as? String == "ended")
        #expect(try ended.json()["ended_at"] is String)

        // The log holds every stored change, in order, written with the change itself.
        let kinds = try await app.database.query("SELECT kind FROM interaction_events ORDER BY seq")
        #expect(try kinds.map { try $0.decode("kind", as: String.self) } == ["state", "message", "message", "media", "state"])
        await app.stop()
    }

    @Test func invalidTransitionsAre409() async throws {
        let app = try await TestApp.start()
        let who = try await Self.people(app)
        let id = try await Self.start(app, who.alice)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.alice).status == 200)
        for (path, body) in [("messages", #"{"text":"late"}"#), ("typing", #"{"typing":true}"#),
                             ("media", #"{"kind":"audio","state":"active"}"#), ("end", nil), ("fail", #"{"reason":"x"}"#)] {
            let token = path == "fail" ? who.agent : who.alice
            let response = try await app.call("POST", "/v1/interactions/\(id)/\(path)", token: token, body: body)
            #expect(response.status == 409, "\(path)")
            #expect(response.header("Content-Type") == "application/problem+json")
        }
        let failed = try await Self.start(app, who.alice)
        let response = try await app.call("POST", "/v1/interactions/\(failed)/fail", token: who.agent, body: #"{"reason":"line dropped"}"#)
        #expect(response.status == 200)
        #expect(try response.json()["failure_reason"] as? String == "line dropped")
        #expect(try await app.call("POST", "/v1/interactions/\(failed)/fail", token: who.agent, body: #"{"reason":"again"}"#).status == 409)
        await app.stop()
    }

    @Test func customersSeeOnlyTheirOwnAndTenantsOnlyTheirs() async throws {
        let app = try await TestApp.start()
        let who = try await Self.people(app)
        let other = try await Self.people(app, tenant: "Other")
        let id = try await Self.start(app, who.alice)
        _ = try await Self.start(app, who.bob)

        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: who.bob).status == 404)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.bob, body: #"{"text":"hi"}"#).status == 404)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/messages", token: who.bob).status == 404)
        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: other.agent).status == 404)
        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: who.agent).status == 200)

        let own = try await app.call("GET", "/v1/interactions", token: who.alice).json()
        #expect((own["items"] as? [[String: Any]])?.compactMap { $0["customer_id"] as? String } == ["alice"])
        let all = try await app.call("GET", "/v1/interactions?limit=1", token: who.agent).json()
        #expect((all["items"] as? [[String: Any]])?.count == 1)
        let next = try #require(all["next_cursor"] as? String)
        let second = try await app.call("GET", "/v1/interactions?limit=1&cursor=\(next)", token: who.agent).json()
        #expect((second["items"] as? [[String: Any]])?.count == 1)
        #expect(second["has_more"] as? Bool == false)
        let started = try await app.call("GET", "/v1/interactions?state=ended", token: who.agent).json()
        #expect((started["items"] as? [[String: Any]])?.isEmpty == true)

        // Roles: agents cannot open interactions; customers cannot fail them.
        #expect(try await app.call("POST", "/v1/interactions", token: who.agent, body: "{}").status == 403)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/fail", token: who.alice, body: #"{"reason":"x"}"#).status == 403)
        #expect(try await app.call("GET", "/v1/interactions", token: who.apiKey).status == 401)
        await app.stop()
    }

    @Test func badInputNamesTheField() async throws {
        let app = try await TestApp.start()
        let who = try await Self.people(app)
        let id = try await Self.start(app, who.alice)
        let long = String(repeating: "x", count: 4001)
        for (path, body, field) in [("messages", #"{"text":""}"#, "text"), ("messages", #"{"text":"\#(long)"}"#, "text"),
                                    ("messages", #"{}"#, "text"), ("typing", #"{"typing":"yes"}"#, "typing"),
                                    ("media", #"{"kind":"hologram","state":"active"}"#, "kind"),
                                    ("media", #"{"kind":"audio","state":"paused"}"#, "state")] {
            let response = try await app.call("POST", "/v1/interactions/\(id)/\(path)", token: who.alice, body: body)
            #expect(response.status == 400, "\(path) \(body.prefix(40))")
            #expect(try response.json()["parameter"] as? String == field)
        }
        #expect(try await app.call("GET", "/v1/interactions?state=open", token: who.agent).status == 400)
        #expect(try await app.call("GET", "/v1/interactions?limit=500", token: who.agent).status == 400)
        #expect(try await app.call("GET", "/v1/interactions/not-a-uuid", token: who.agent).status == 404)
        await app.stop()
    }

    @Test func anIdempotencyKeyRetryCreatesOneMessage() async throws {
        let app = try await TestApp.start()
        let who = try await Self.people(app)
        let id = try await Self.start(app, who.alice)
        let headers = ["Idempotency-Key": "msg-001"]
        let first = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, headers: headers, body: #"{"text":"once"}"#)
        let retry = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, headers: headers, body: #"{"text":"once"}"#)
        #expect(first.status == 201)
        #expect(retry.status == 201)
        #expect(retry.body == first.body)
        #expect(retry.header("Idempotent-Replayed") == "true")
        let different = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, headers: headers, body: #"{"text":"twice"}"#)
        #expect(different.status == 422)
        // Concurrent retries with one key still create one message.
        let racing = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0 ..< 8 {
                group.addTask {
                    try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice,
                                       headers: ["Idempotency-Key": "msg-002"], body: #"{"text":"race"}"#).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(racing.allSatisfy { $0 == 201 })
        let texts = try await app.database.query("SELECT payload->>'text' AS text FROM interaction_events WHERE kind = 'message' ORDER BY seq")
        #expect(try texts.map { try $0.decode("text", as: String.self) } == ["once", "race"])
        await app.stop()
    }
}

@Suite("Idempotency records", .timeLimit(.minutes(10)))
struct IdempotencyPruningTests {
    @Test func recordsAreKeptADayAndThenPruned() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        for key in ["old", "fresh"] {
            #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice,
                                       headers: ["Idempotency-Key": key], body: #"{"text":"\#(key)"}"#).status == 201)
        }
        _ = try await app.database.query("UPDATE idempotency_keys SET created_at = now() - interval '26 hours' WHERE key = 'old'")
        _ = try await app.database.query("UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE key = 'fresh'")
        let pruned = try await IdempotentWrites(pool: app.app.pool).prune()
        #expect(pruned == 1)
        let left = try await app.database.query("SELECT key FROM idempotency_keys")
        #expect(try left.map { try $0.decode("key", as: String.self) } == ["fresh"])
        await app.stop()
    }
}
