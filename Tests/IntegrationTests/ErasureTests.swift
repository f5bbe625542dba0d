import Foundation
import Postgres
import TestSupport
import Testing

/// Erasure (`DELETE /v1/users/{user_id}/data`) against the real database, two replicas and live streams: the user's
/// texts, subjects and files are found in the database first (the positive control), then nowhere — searched over
/// every text, jsonb and bytea column of every table and `pg_largeobject` — while the log keeps its events, redacted,
/// and everyone else's messages stay as they were.
@Suite("Erasure", .timeLimit(.minutes(5)))
struct ErasureTests {
    /// Two replicas on one database, a tenant, and its API key.
    struct Scene {
        let first: TestApp
        let second: TestApp
        let apiKey: String
        let tenantID: String

        static func start() async throws -> Scene {
            let database = try await TestDatabase.create()
            let first = try await TestApp.start(database: database, erasureGrace: .seconds(6))
            let second = try await TestApp.start(database: database, erasureGrace: .seconds(6))
            let tenant = try await first.createTenant("Bank")
            return Scene(first: first, second: second, apiKey: tenant.apiKey, tenantID: tenant.id)
        }

        func stop() async {
            await second.stopKeepingDatabase()
            await first.stop()
        }

        /// Waits for erasure `id` to complete; its last state.
        func completed(_ id: String) async throws -> [String: Any] {
            var last: [String: Any] = [:]
            _ = await eventually(timeout: .seconds(60)) {
                last = (try? await first.call("GET", "/v1/erasures/\(id)", token: apiKey).json()) ?? [:]
                return last["state"] as? String == "completed"
            }
            if last["state"] as? String != "completed" {
                for line in (first.log.all + second.log.all).filter({ $0.contains("erasure") }).suffix(5) { print(line) }
            }
            return last
        }
    }

    /// Where `needle` occurs in the database: every text-like column (jsonb, arrays and enums by their text) and
    /// every bytea column of every table in the public schema, and the large objects; "table.column" of each.
    static func occurrences(of needle: String, in database: TestDatabase) async throws -> [String] {
        let columns = try await database.query("""
            SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
              AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea', 'ARRAY', 'USER-DEFINED')
            """)
        var found: [String] = []
        for column in columns {
            let table: String = try column.decode("table_name"), name: String = try column.decode("column_name")
            let test = try column.decode("data_type", as: String.self) == "bytea"
                ? "position(convert_to($1, 'UTF8') IN \"\(name)\") > 0" : "strpos(\"\(name)\"::text, $1) > 0"
            let rows = try await database.query("SELECT count(*) AS n FROM \"\(table)\" WHERE \(test)", [needle])
            if try rows[0].decode("n", as: Int64.self) > 0 { found.append("\(table).\(name)") }
        }
        let objects = try await database.query(
            "SELECT count(*) AS n FROM pg_largeobject WHERE position(convert_to($1, 'UTF8') IN data) > 0", [needle])
        if try objects[0].decode("n", as: Int64.self) > 0 { found.append("pg_largeobject") }
        return found
    }

    @Test func anErasureMidConversationLeavesNoByteOfTheUserBehind() async throws {
        let scene = try await Scene.start()
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let (first, second, apiKey) = (scene.first, scene.second, scene.apiKey)
        let marker = "m4rk" + UUID().uuidString.prefix(8).lowercased()
        let user = "cust-" + UUID().uuidString.prefix(8).lowercased()
        let endpoint = try JSONSerialization.data(withJSONObject: [
            "url": receiver.url("/hooks"), "events": ["interaction.started", "message.created"]])
        #expect(try await first.call("POST", "/v1/webhooks/endpoints", token: apiKey,
                                     body: String(decoding: endpoint, as: UTF8.self)).status == 201)
        let customer = try await first.createSession(apiKey: apiKey, user: user, role: "customer")
        let viewer = try await first.createSession(apiKey: apiKey, user: user, role: "customer")
        let agent = try await second.createSession(apiKey: apiKey, user: "agent-1", role: "agent")
        let other = try await second.createSession(apiKey: apiKey, user: "other-customer", role: "customer")

        let created = try await first.call("POST", "/v1/interactions", token: customer,
                                           headers: ["Idempotency-Key": "open-1"], body: #"{"subject":"subject \#(marker)"}"#)
        let id = try #require(try created.json()["id"] as? String)
        let otherID = try #require(try await second.call("POST", "/v1/interactions", token: other, body: "{}").json()["id"] as? String)
        let file = Array("statement \(marker) ".utf8) + AttachmentsTests.text(5000)
        let attachment = try await AttachmentsTests.uploaded(first, id, token: customer, bytes: file, filename: "\(marker).txt")
        let attachmentID = try #require(attachment["id"] as? String)

        // The agent follows on one replica; a stream on the other is the customer's own (revoked by the erasure).
        let agentPort = second.port, customerPort = first.port
        let agentStream = try await onThread { try EventStreamClient(port: agentPort, path: "/v1/interactions/\(id)/events", token: agent) }
        let customerStream = try await onThread {
            try EventStreamClient(port: customerPort, path: "/v1/interactions/\(id)/events", token: viewer)
        }
        var customerSeqs: [Int] = []
        for n in 0 ..< 4 {
            let body = n == 0 ? #"{"text":"secret \#(marker) \#(n)","attachment_ids":["\#(attachmentID)"]}"#
                : #"{"text":"secret \#(marker) \#(n)"}"#
            let sent = try await (n.isMultiple(of: 2) ? first : second).call(
                "POST", "/v1/interactions/\(id)/messages", token: customer, headers: ["Idempotency-Key": "m-\(n)"], body: body)
            #expect(sent.status == 201, "\(sent.text)")
            customerSeqs.append(try #require(try sent.json()["seq"] as? Int))
            let reply = try await second.call("POST", "/v1/interactions/\(id)/messages", token: agent,
                                              body: #"{"text":"agent reply \#(n)"}"#)
            #expect(reply.status == 201)
        }
        #expect(try await second.call("POST", "/v1/interactions/\(otherID)/messages", token: other,
                                      body: #"{"text":"other customer's words"}"#).status == 201)
        _ = await eventually(timeout: .seconds(20)) {
            (try? await receiver.deliveries(to: "/hooks").count) ?? 0 >= 10
        }

        // The positive control: the marker and the user id are in the database before.
        let before = try await Self.occurrences(of: marker, in: first.database)
        for place in ["interaction_events.payload", "interactions.subject", "idempotency_keys.body", "webhook_messages.body",
                      "attachment_pieces.data", "attachments.filename"] {
            #expect(before.contains(place), "the marker was not found in \(place) before the erasure: \(before)")
        }
        #expect(try await Self.occurrences(of: user, in: first.database).contains("sessions.user_id"))

        let erased = try await second.call("DELETE", "/v1/users/\(user)/data", token: apiKey)
        #expect(erased.status == 202, "\(erased.text)")
        let erasure = try erased.json()
        let erasureID = try #require(erasure["id"] as? String)
        #expect(erased.header("Location") == "/v1/erasures/\(erasureID)")
        #expect(erasure["state"] as? String == "pending")
        // The user is signed out at once: REST refused, their stream told to reconnect.
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await first.call("POST", "/v1/interactions/\(id)/messages", token: customer, body: #"{"text":"late"}"#).status) == 401
        })
        let customerEnd = try await onThread { try customerStream.eventsUntilEnd(timeout: 15) }
        #expect(customerEnd.last?.event == "reconnect" && customerEnd.last?.data.contains("session_revoked") == true)
        // No new session while it runs: what the user wrote with it could fall on either side of the walk.
        let refusedSession = try await first.call("POST", "/v1/sessions", token: apiKey,
                                                  body: #"{"user_id":"\#(user)","role":"customer"}"#)
        #expect(refusedSession.status == 409 && refusedSession.header("Content-Type") == "application/problem+json")
        // A second request while it runs answers the same erasure.
        #expect(try await first.call("DELETE", "/v1/users/\(user)/data", token: apiKey).json()["id"] as? String == erasureID)

        let done = try await scene.completed(erasureID)
        #expect(done["state"] as? String == "completed", "\(done)")
        let counts = done["counts"] as? [String: Any] ?? [:]
        // Four messages, and a fifth if the attempt after the request got through before its replica heard of
        // the revocation (the erasure starts after a grace for such requests).
        let sentRows = try await first.database.query("""
            SELECT seq FROM interaction_events WHERE interaction_id = $1::uuid AND kind = 'message'
              AND payload->>'sender_role' = 'customer' ORDER BY seq
            """, [id])
        customerSeqs = try sentRows.map { Int(try $0.decode("seq", as: Int64.self)) }
        #expect(customerSeqs.count >= 4)
        #expect(counts["messages_redacted"] as? Int == customerSeqs.count)
        #expect(counts["subjects_redacted"] as? Int == 1)
        #expect(counts["attachments_deleted"] as? Int == 1)
        #expect((counts["sessions_revoked"] as? Int ?? 0) >= 2)
        #expect((counts["idempotency_records_deleted"] as? Int ?? 0) >= 5)
        #expect((counts["webhook_messages_redacted"] as? Int ?? 0) >= 5)

        // The live stream was told which events were redacted.
        let expectedSeqs = Set(customerSeqs)
        let redactions = try await onThread { () -> [Int] in
            var ids: [Int] = []
            let deadline = Date().addingTimeInterval(15)
            while !expectedSeqs.isSubset(of: Set(ids)), Date() < deadline {
                for event in (try? agentStream.events(1, timeout: 2)) ?? [] where event.event == "redacted" {
                    ids += agentStream.json(event)["event_ids"] as? [Int] ?? []
                }
            }
            return ids
        }
        #expect(Set(redactions) == expectedSeqs)
        agentStream.socket.shutdownAndClose()

        // Not a byte of the user's texts, subject or file is left, nor the user id.
        #expect(try await Self.occurrences(of: marker, in: first.database) == [])
        #expect(try await Self.occurrences(of: user, in: first.database) == [])
        #expect(try await first.database.query("SELECT 1 FROM audit_pseudonyms WHERE user_id = $1", [user]).isEmpty)

        // A resume from the start shows every event in its place, the user's messages redacted, everyone else's as sent.
        let replay = try await onThread { () -> [ReceivedEvent] in
            let stream = try EventStreamClient(port: customerPort, path: "/v1/interactions/\(id)/events", token: agent,
                                               lastEventID: "0")
            defer { stream.socket.shutdownAndClose() }
            var events: [ReceivedEvent] = []
            while let next = try? stream.events(1, timeout: 2), !next.isEmpty { events += next }
            return events
        }
        let messages = replay.filter { $0.event == "message" }.map { event in
            (try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]) ?? [:]
        }
        #expect(messages.count == 4 + customerSeqs.count)
        for message in messages where message["sender_role"] as? String == "customer" {
            #expect(message["text"] as? String == "" && message["redacted"] as? Bool == true)
            #expect(message["attachments"] == nil)
            #expect((message["sender_id"] as? String)?.hasPrefix("erased-") == true)
        }
        let replies = messages.filter { $0["sender_role"] as? String == "agent" }.compactMap { $0["text"] as? String }
        #expect(replies == (0 ..< 4).map { "agent reply \($0)" })
        let listed = try await first.call("GET", "/v1/interactions/\(id)/messages?limit=100", token: agent).json()
        let items = listed["items"] as? [[String: Any]] ?? []
        // Every customer message the database holds (a fifth when the late attempt got through, as above).
        #expect(items.filter { $0["redacted"] as? Bool == true }.count == customerSeqs.count)
        let shown = try await second.call("GET", "/v1/interactions/\(id)", token: agent).json()
        #expect(shown["subject"] is NSNull)
        #expect((shown["customer_id"] as? String)?.hasPrefix("erased-") == true)
        let otherMessages = try await first.call("GET", "/v1/interactions/\(otherID)/messages", token: agent).json()
        #expect((otherMessages["items"] as? [[String: Any]])?.first?["text"] as? String == "other customer's words")
        #expect(try await first.call("GET", "/v1/attachments/\(attachmentID)", token: agent).status == 404)

        // Once complete, the same id starts afresh.
        #expect(try await first.call("POST", "/v1/sessions", token: apiKey,
                                     body: #"{"user_id":"\#(user)","role":"customer"}"#).status == 201)

        // The audit trail recorded the request and the completion, and never held the user id.
        let audit = try await first.database.query("SELECT action FROM audit_events ORDER BY id").map { try $0.decode("action", as: String.self) }
        #expect(audit.contains("user.erasure_requested") && audit.contains("erasure.completed"))
        await scene.stop()
    }

    /// An agent writes in many customers' interactions: their erasure walks the whole tenant and redacts their
    /// messages everywhere, customers' messages untouched; a customer's erasure walks only what they opened.
    @Test func anAgentsErasureReachesEveryInteractionTheyWroteIn() async throws {
        let scene = try await Scene.start()
        let app = scene.first, apiKey = scene.apiKey
        let agent = try await app.createSession(apiKey: apiKey, user: "agent-gone", role: "agent")
        var rooms: [String] = []
        for n in 0 ..< 3 {
            let customer = try await app.createSession(apiKey: apiKey, user: "customer-\(n)", role: "customer")
            let id = try await InteractionsEndToEndTests.start(app, customer)
            #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: customer, body: #"{"text":"question \#(n)"}"#).status == 201)
            #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: agent).status == 200)
            #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: agent, body: #"{"text":"agent words \#(n)"}"#).status == 201)
            rooms.append(id)
        }
        let accepted = try await app.call("DELETE", "/v1/users/agent-gone/data", token: apiKey)
        let done = try await scene.completed(try #require(try accepted.json()["id"] as? String))
        #expect((done["counts"] as? [String: Any])?["messages_redacted"] as? Int == 3)
        #expect(try await Self.occurrences(of: "agent words", in: app.database) == [])
        #expect(try await Self.occurrences(of: "agent-gone", in: app.database) == [])
        for (n, id) in rooms.enumerated() {
            let rows = try await app.database.query(
                "SELECT count(*) AS n FROM interaction_events WHERE interaction_id = $1::uuid AND payload->>'text' = $2",
                [id, "question \(n)"])
            #expect(try rows[0].decode("n", as: Int64.self) == 1)
            let assignee = try await app.database.query("SELECT assigned_agent_id FROM interactions WHERE id = $1::uuid", [id])
            #expect(try assignee[0].decode("assigned_agent_id", as: String.self).hasPrefix("erased-"))
        }
        await scene.stop()
    }

    @Test func aUserOnLegalHoldIsNotErasedUntilReleased() async throws {
        let scene = try await Scene.start()
        let app = scene.first, apiKey = scene.apiKey
        let customer = try await app.createSession(apiKey: apiKey, user: "held", role: "customer")
        let id = try await InteractionsEndToEndTests.start(app, customer)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: customer, body: #"{"text":"keep me"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/users/held/hold", token: apiKey, body: #"{"reason":"litigation"}"#).status == 201)
        let refused = try await app.call("DELETE", "/v1/users/held/data", token: apiKey)
        #expect(refused.status == 409)
        #expect(refused.header("Content-Type") == "application/problem+json")
        #expect(try await app.call("GET", "/v1/interactions/\(id)/messages", token: customer).status == 200)

        #expect(try await app.call("DELETE", "/v1/users/held/hold", token: apiKey).status == 204)
        let accepted = try await app.call("DELETE", "/v1/users/held/data", token: apiKey)
        #expect(accepted.status == 202)
        // A hold placed after the request stops the erasure before it starts, and releasing it lets it run.
        #expect(try await app.call("POST", "/v1/users/held/hold", token: apiKey, body: "{}").status == 201)
        try await Task.sleep(for: .seconds(8))
        let erasureID = try #require(try accepted.json()["id"] as? String)
        #expect(try await app.call("GET", "/v1/erasures/\(erasureID)", token: apiKey).json()["state"] as? String == "pending")
        let stillThere = try await app.database.query("SELECT 1 FROM interaction_events WHERE payload->>'text' = 'keep me'")
        #expect(stillThere.count == 1)
        #expect(try await app.call("DELETE", "/v1/users/held/hold", token: apiKey).status == 204)
        let done = try await scene.completed(erasureID)
        #expect(done["state"] as? String == "completed")
        #expect((done["counts"] as? [String: Any])?["messages_redacted"] as? Int == 1)
        await scene.stop()
    }

    @Test func erasuresAreTheTenantsOwnAndBadRequestsAreProblems() async throws {
        let scene = try await Scene.start()
        let app = scene.first
        let other = try await app.createTenant("Other")
        let customer = try await app.createSession(apiKey: scene.apiKey, user: "somebody-else", role: "customer")
        let accepted = try await app.call("DELETE", "/v1/users/someone/data", token: scene.apiKey)
        let id = try #require(try accepted.json()["id"] as? String)
        #expect(try await app.call("GET", "/v1/erasures/\(id)", token: other.apiKey).status == 404)
        #expect(try await app.call("GET", "/v1/erasures/not-a-uuid", token: scene.apiKey).status == 404)
        #expect(try await app.call("GET", "/v1/erasures/\(UUID().uuidString)", token: scene.apiKey).status == 404)
        let longID = String(repeating: "x", count: 201)
        let tooLong = try await app.call("DELETE", "/v1/users/\(longID)/data", token: scene.apiKey)
        #expect(tooLong.status == 400 && tooLong.header("Content-Type") == "application/problem+json")
        #expect(try await app.call("DELETE", "/v1/users/someone/data", token: customer).status == 401)
        #expect(try await app.call("DELETE", "/v1/users/someone/data").status == 401)
        await scene.stop()
    }
}
