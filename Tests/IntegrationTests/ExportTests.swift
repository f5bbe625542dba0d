import Foundation
import Postgres
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `GET /v1/users/{user_id}/export`: the user's interactions, messages, attachments (with signed links that work
/// without credentials until they expire) and, when asked, notes — one JSON document, streamed in constant memory.
@Suite("Export", .timeLimit(.minutes(10)))
struct ExportTests {
    @Test func anExportIsTheUsersDataAsOneJSONDocument() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let first = try await InteractionsEndToEndTests.start(app, who.alice, subject: "Card blocked")
        let second = try await InteractionsEndToEndTests.start(app, who.alice, subject: "Statement")
        _ = try await InteractionsEndToEndTests.start(app, who.bob, subject: "Bob's own")
        let file = AttachmentsTests.text(3000)
        let upload = try await AttachmentsTests.uploaded(app, first, token: who.alice, bytes: file, filename: "card.txt")
        let fileID = try #require(upload["id"] as? String)
        #expect(try await app.call("POST", "/v1/interactions/\(first)/messages", token: who.alice,
                                   body: #"{"text":"Here is my \"card\"","attachment_ids":["\#(fileID)"]}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(first)/messages", token: who.agent, body: #"{"text":"Thanks"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(first)/notes", token: who.agent, body: #"{"text":"Known issue"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(second)/end", token: who.alice).status == 200)

        let exported = try await app.call("GET", "/v1/users/alice/export", token: who.apiKey)
        #expect(exported.status == 200)
        #expect(exported.header("Content-Type") == "application/json")
        #expect(exported.header("Content-Disposition")?.hasPrefix("attachment;") == true)
        let document = try exported.json()
        #expect(document["user_id"] as? String == "alice")
        let interactions = try #require(document["interactions"] as? [[String: Any]])
        #expect(interactions.map { $0["id"] as? String } == [first, second])
        #expect(interactions[1]["state"] as? String == "ended")
        #expect(interactions[0]["notes"] == nil)
        let messages = try #require(interactions[0]["messages"] as? [[String: Any]])
        #expect(messages.map { $0["text"] as? String } == [#"Here is my "card""#, "Thanks"])
        let attachment = try #require((messages[0]["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["id"] as? String == fileID && attachment["filename"] as? String == "card.txt")
        let link = try #require(attachment["download_url"] as? String)

        // The link works without credentials; changed, or expired, it does not.
        let fetched = try await app.call("GET", link)
        #expect(fetched.status == 200 && fetched.body == file)
        let forged = link.replacingOccurrences(of: "signature=", with: "signature=0")
        #expect(try await app.call("GET", String(forged.dropLast())).status == 403)
        let expires = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "expires" }?.value)
        #expect(try await app.call("GET", link.replacingOccurrences(of: "expires=\(expires)", with: "expires=\(Int(expires)! - 7200)")).status == 403)
        #expect(try await app.call("GET", "/v1/attachments/\(fileID)?expires=1&signature=x").status == 403)

        let withNotes = try await app.call("GET", "/v1/users/alice/export?include_notes=1", token: who.apiKey).json()
        let notes = ((withNotes["interactions"] as? [[String: Any]])?.first?["notes"] as? [[String: Any]])?.map { $0["text"] as? String }
        #expect(notes == ["Known issue"])
        let nobody = try await app.call("GET", "/v1/users/nobody/export", token: who.apiKey).json()
        #expect((nobody["interactions"] as? [Any])?.isEmpty == true)
        #expect(try await app.call("GET", "/v1/users/alice/export", token: who.agent).status == 401)
        #expect(try await app.call("GET", "/v1/users/alice/export?include_notes=yes", token: who.apiKey).status == 400)
        let audited = try await app.database.query("SELECT count(*) AS n FROM audit_events WHERE action = 'user.exported'")
        #expect(try audited.first?.decode("n", as: Int64.self) == 3)
        await app.stop()
    }

    /// A user with 100,000 messages: the export is valid JSON holding all of them, and the server's memory grows by
    /// less than 20 MB while it streams (its own process, read from /proc). Not under ThreadSanitizer, whose shadow
    /// memory grows with every byte touched.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["SANITIZE"] != nil, "ThreadSanitizer multiplies memory"))
    func aLargeExportStreamsInConstantMemory() async throws {
        let database = try await TestDatabase.create()
        let server = try await SignalTests.launch(extra: ["DATABASE_URL": database.url, "SWITCHBOARD_ADMIN_TOKEN": TestApp.adminToken,
                                                         "RATE_LIMIT_PER_MINUTE": "0"])
        let port = server.port
        await waitUntil(timeout: .seconds(60)) { (try? await request(port: port, "GET", "/readyz").status) == 200 }
        let tenant = try await request(port: port, "POST", "/v1/admin/tenants", headers: ["Authorization": "Bearer \(TestApp.adminToken)"],
                                       body: #"{"name":"Big"}"#).json()
        let key = try #require(tenant["api_key"] as? String)
        let tenantID = try #require(tenant["id"] as? String)
        // 100 interactions of 1,000 messages each, written directly (the API would take minutes).
        _ = try await database.query("""
            WITH made AS (
                INSERT INTO interactions (tenant_id, customer_id, subject, last_seq)
                SELECT $1::uuid, 'heavy', 'conversation ' || n, 1000 FROM generate_series(1, 100) AS n RETURNING id
            )
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT made.id, g, 'message', jsonb_build_object('id', gen_random_uuid(), 'text', 'message number ' || g || ' of a long history',
                                                              'sender_role', 'customer', 'sender_id', 'heavy')
            FROM made CROSS JOIN generate_series(1, 1000) AS g
            """, [UUID(uuidString: tenantID)])
        // Warm up: a small export, so what is measured is what the large one adds.
        _ = try await request(port: port, "GET", "/v1/users/nobody/export", headers: ["Authorization": "Bearer \(key)"])
        let baseline = try AttachmentLoadTests.residentBytes(of: server.child.pid)
        let pid = server.child.pid
        let sampling = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, (try? AttachmentLoadTests.residentBytes(of: pid)) ?? 0)
                try? await Task.sleep(for: .milliseconds(10))
            }
            return peak
        }
        let exported = try await onThread { () -> RawResponse in
            let socket = try RawSocket(port: port)
            try socket.send("GET /v1/users/heavy/export HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nConnection: close\r\n\r\n")
            return try socket.readResponse(timeout: 120)
        }
        sampling.cancel()
        let peak = await sampling.value
        server.child.signal(SIGTERM)
        _ = try await onThread { server.child.wait() }
        #expect(exported.status == 200)
        let document = try exported.json()
        let interactions = try #require(document["interactions"] as? [[String: Any]])
        let messages = interactions.reduce(0) { $0 + (($1["messages"] as? [Any])?.count ?? 0) }
        #expect(interactions.count == 100 && messages == 100_000)
        let grown = peak - baseline
        print("export: server RSS \(baseline >> 20) MB before a \(exported.body.count >> 20) MB export, peak \(peak >> 20) MB")
        #expect(grown < 20 << 20, "RSS grew by \(grown >> 20) MB (baseline \(baseline >> 20) MB, peak \(peak >> 20) MB)")
        await database.drop()
    }
}
