import Foundation
import Interactions
import Postgres
import Testing
import TestSupport

/// Retention with an injected "now": exactly the ended and failed interactions older than their tenant's window go,
/// with every row kept of them, on two replicas at once without double deletion; started interactions, users on
/// legal hold and tenants without a retention keep theirs.
@Suite("Retention", .timeLimit(.minutes(10)))
struct RetentionTests {
    /// An interaction of `customer` with `messages` messages, a note and a read position, ended (or left started).
    static func conversation(_ app: TestApp, key: String, customer: String, agent: String, messages: Int,
                             end: Bool = true) async throws -> String {
        let token = try await app.createSession(apiKey: key, user: customer)
        let id = try await InteractionsEndToEndTests.start(app, token, subject: "Subject of \(customer)")
        for n in 0 ..< messages {
            #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: n % 2 == 0 ? token : agent,
                                       body: #"{"text":"message \#(n) of \#(customer)"}"#).status == 201)
        }
        #expect(try await app.call("POST", "/v1/interactions/\(id)/notes", token: agent, body: #"{"text":"a note"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/read", token: token, body: #"{"event_id":1}"#).status == 200)
        if end { #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: token).status == 200) }
        return id
    }

    static func rows(_ app: TestApp, of ids: [String]) async throws -> Int {
        let list = PostgresArray(ids.compactMap(UUID.init(uuidString:)))
        return Int(try await app.database.query("""
            SELECT (SELECT count(*) FROM interactions WHERE id = ANY($1::uuid[]))
                 + (SELECT count(*) FROM interaction_events WHERE interaction_id = ANY($1::uuid[]))
                 + (SELECT count(*) FROM interaction_notes WHERE interaction_id = ANY($1::uuid[]))
                 + (SELECT count(*) FROM interaction_reads WHERE interaction_id = ANY($1::uuid[]))
                 + (SELECT count(*) FROM interaction_changes WHERE interaction_id = ANY($1::uuid[]))
                 + (SELECT count(*) FROM webhook_messages WHERE interaction_id = ANY($1::uuid[]))
                 + (SELECT count(*) FROM attachments WHERE interaction_id = ANY($1::uuid[])) AS n
            """, [list]).first?.decode("n", as: Int64.self) ?? -1)
    }

    @Test func exactlyWhatIsPastTheWindowGoesOnTwoReplicasAtOnce() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant("Kept 30 days")
        let agent = try await app.createSession(apiKey: tenant.apiKey, user: "agent-1", role: "agent")
        #expect(try await app.call("PATCH", "/v1/settings", token: tenant.apiKey, body: #"{"retention_days":30}"#)
            .json()["retention_days"] as? Int == 30)
        let hook = try await app.call("POST", "/v1/webhooks/endpoints", token: tenant.apiKey,
                                      body: #"{"url":"http://127.0.0.1:9/hook","events":["message.created"]}"#)
        #expect(hook.status == 201)
        let other = try await app.createTenant("Keeps everything")
        let otherAgent = try await app.createSession(apiKey: other.apiKey, user: "agent-2", role: "agent")

        var doomed: [String] = [], kept: [String] = []
        for n in 0 ..< 4 {
            doomed.append(try await Self.conversation(app, key: tenant.apiKey, customer: "old-\(n)", agent: agent, messages: 12,
                                                      end: n > 0))
        }
        let held = try await Self.conversation(app, key: tenant.apiKey, customer: "held", agent: agent, messages: 3)
        let young = try await Self.conversation(app, key: tenant.apiKey, customer: "young", agent: agent, messages: 3)
        let open = try await Self.conversation(app, key: tenant.apiKey, customer: "open", agent: agent, messages: 3, end: false)
        let elsewhere = try await Self.conversation(app, key: other.apiKey, customer: "other", agent: otherAgent, messages: 3)
        kept = [held, young, open, elsewhere]
        let file = try await AttachmentsTests.uploaded(app, doomed[0], token: agent, bytes: AttachmentsTests.text(600_000))
        let fileID = try #require(file["id"] as? String)
        #expect(try await app.call("POST", "/v1/interactions/\(doomed[0])/messages", token: agent,
                                   body: #"{"attachment_ids":["\#(fileID)"]}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(doomed[0])/end", token: agent).status == 200)
        #expect(try await app.call("POST", "/v1/users/held/hold", token: tenant.apiKey, body: #"{"reason":"litigation"}"#).status == 201)

        // The clock: "now" is fixed, and ends are placed around the 30-day window (one second either side of it).
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        let window: TimeInterval = 30 * 86_400
        let ages: [TimeInterval] = [window + 1, window + 3600, 90 * 86_400, 400 * 86_400, 400 * 86_400, window - 1, 400 * 86_400]
        for (id, age) in zip(doomed + [held, young, elsewhere], ages) {
            _ = try await app.database.query("UPDATE interactions SET ended_at = $2 WHERE id = $1::uuid",
                                             [UUID(uuidString: id), now.addingTimeInterval(-age)])
        }
        _ = try await app.database.query("UPDATE interactions SET created_at = $2 WHERE id = $1::uuid",
                                         [UUID(uuidString: open), now.addingTimeInterval(-400 * 86_400)])
        let keptBefore = try await Self.rows(app, of: kept)
        #expect(try await Self.rows(app, of: doomed) > 4 * 12)

        // Two replicas (pools of their own), small batches, at once.
        let pools = (0 ..< 2).map { _ in
            PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 2)
        }
        let rounds = try await withThrowingTaskGroup(of: ConversationRetention.Round.self) { group in
            for pool in pools {
                group.addTask { try await ConversationRetention(pool: pool, floorDays: 1, batch: 7).purge(now: now) }
            }
            return try await group.reduce(into: [ConversationRetention.Round]()) { $0.append($1) }
        }
        #expect(rounds.map(\.interactions).reduce(0, +) == 4, "\(rounds)")
        #expect(try await Self.rows(app, of: doomed) == 0)
        #expect(try await Self.rows(app, of: kept) == keptBefore)
        #expect(try await app.database.query("SELECT 1 FROM attachment_pieces").isEmpty)

        // Released from hold: the held conversation goes on the next run.
        #expect(try await app.call("DELETE", "/v1/users/held/hold", token: tenant.apiKey).status == 204)
        let afterRelease = try await ConversationRetention(pool: pools[0], floorDays: 1).purge(now: now)
        #expect(afterRelease.interactions == 1)
        #expect(try await Self.rows(app, of: [held]) == 0)
        // A floor above the tenant's window keeps what the window alone would purge.
        _ = try await app.database.query("UPDATE interactions SET ended_at = $2 WHERE id = $1::uuid",
                                         [UUID(uuidString: young), now.addingTimeInterval(-40 * 86_400)])
        #expect(try await ConversationRetention(pool: pools[0], floorDays: 60).purge(now: now).interactions == 0)
        #expect(try await ConversationRetention(pool: pools[0], floorDays: 1).purge(now: now).interactions == 1)
        for pool in pools { await pool.close() }
        await app.stop()
    }

    @Test func settingsAndHoldsRefuseWhatTheyCannotTake() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        #expect(try await app.call("GET", "/v1/settings", token: who.apiKey).json()["retention_days"] is NSNull)
        for body in [#"{"retention_days":0}"#, #"{"retention_days":36501}"#, #"{"retention_days":"30"}"#, #"{"retention_days":1.5}"#] {
            let refused = try await app.call("PATCH", "/v1/settings", token: who.apiKey, body: body)
            #expect(refused.status == 400, "\(body)")
            #expect(try refused.json()["parameter"] as? String == "retention_days", "\(body)")
        }
        #expect(try await app.call("PATCH", "/v1/settings", token: who.apiKey, body: #"{"retention_days":7}"#).json()["retention_days"] as? Int == 7)
        #expect(try await app.call("PATCH", "/v1/settings", token: who.apiKey, body: #"{"max_open_per_agent":3}"#).json()["retention_days"] as? Int == 7)
        #expect(try await app.call("PATCH", "/v1/settings", token: who.apiKey, body: #"{"retention_days":null}"#).json()["retention_days"] is NSNull)

        #expect(try await app.call("GET", "/v1/users/alice/hold", token: who.apiKey).status == 404)
        #expect(try await app.call("POST", "/v1/users/alice/hold", token: who.apiKey).status == 201)
        #expect(try await app.call("POST", "/v1/users/alice/hold", token: who.apiKey, body: #"{"reason":"audit"}"#).status == 200)
        #expect(try await app.call("GET", "/v1/users/alice/hold", token: who.apiKey).json()["reason"] as? String == "audit")
        #expect(try await app.call("POST", "/v1/users/alice/hold", token: who.agent).status == 401)
        #expect(try await app.call("POST", "/v1/users/alice/hold", token: who.apiKey, body: #"{"reason":""}"#).status == 400)
        #expect(try await app.call("POST", "/v1/users/alice/hold", token: who.apiKey, body: #"{"why":"x"}"#).status == 400)
        #expect(try await app.call("DELETE", "/v1/users/alice/hold", token: who.apiKey).status == 204)
        #expect(try await app.call("DELETE", "/v1/users/alice/hold", token: who.apiKey).status == 404)
        let trail = try await app.database.query("SELECT action FROM audit_events WHERE action LIKE 'legal_hold.%' ORDER BY id")
            .map { try $0.decode("action", as: String.self) }
        #expect(trail == ["legal_hold.placed", "legal_hold.updated", "legal_hold.released"])
        await app.stop()
    }
}
