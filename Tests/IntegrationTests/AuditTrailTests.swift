import Accounts
import Crypto
import Foundation
import Postgres
import Testing
import TestSupport

/// The audit trail end to end: every audited action writes exactly one entry in its own transaction (a failed one
/// none), users appear only by pseudonym, the table refuses changes, the API lists entries, and the chain's seals
/// expose tampering to `switchboard audit verify`.
@Suite("Audit trail", .timeLimit(.minutes(10)))
struct AuditTrailTests {
    /// The tenant's entries, oldest first: (action, actor kind, target kind).
    static func entries(_ app: TestApp, tenant: String) async throws -> [(action: String, actor: String, target: String)] {
        try await app.database.query("""
            SELECT action, actor_kind, target_kind FROM audit_events WHERE tenant_id = $1::uuid ORDER BY id
            """, [UUID(uuidString: tenant)]).map { (try $0.decode("action"), try $0.decode("actor_kind"), try $0.decode("target_kind")) }
    }

    static func count(_ app: TestApp, _ sql: String) async throws -> Int {
        Int(try await app.database.query(sql).first?.decode("n", as: Int64.self) ?? -1)
    }

    @Test func everyAuditedActionWritesExactlyOneEntry() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant("Audited")
        let key = tenant.apiKey
        let issued = try await app.call("POST", "/v1/admin/tenants/\(tenant.id)/keys", token: TestApp.adminToken)
        let secondKey = try #require(try issued.json()["id"] as? String)
        #expect(try await app.call("DELETE", "/v1/admin/tenants/\(tenant.id)/keys/\(secondKey)", token: TestApp.adminToken).status == 204)
        let alice = try await app.createSession(apiKey: key, user: "alice-7f3c", role: "customer")
        let agent = try await app.createSession(apiKey: key, user: "agent-7f3c", role: "agent")
        let other = try await app.createSession(apiKey: key, user: "agent-8e21", role: "agent")
        let id = try await InteractionsEndToEndTests.start(app, alice)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: agent,
                                   headers: ["X-Request-ID": "claim-request-1"]).status == 200)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: key, body: #"{"agent_id":"agent-8e21"}"#).status == 200)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: key, body: #"{"agent_id":null}"#).status == 200)
        // Agents' reads: one entry per agent and interaction in ten minutes, however many reads.
        for _ in 0 ..< 3 { #expect(try await app.call("GET", "/v1/interactions/\(id)", token: agent).status == 200) }
        #expect(try await app.call("GET", "/v1/interactions/\(id)/messages", token: agent).status == 200)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/messages", token: other).status == 200)
        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: alice).status == 200)  // a customer's: not audited
        #expect(try await app.call("PATCH", "/v1/settings", token: key, body: #"{"max_open_per_agent":7}"#).status == 200)
        let endpoint = try await app.call("POST", "/v1/webhooks/endpoints", token: key,
                                          body: #"{"url":"http://127.0.0.1:9/hook","events":["message.created"]}"#)
        let endpointID = try #require(try endpoint.json()["id"] as? String)
        #expect(try await app.call("PATCH", "/v1/webhooks/endpoints/\(endpointID)", token: key, body: #"{"disabled":true}"#).status == 200)
        #expect(try await app.call("POST", "/v1/webhooks/endpoints/\(endpointID)/rotate-secret", token: key).status == 200)
        #expect(try await app.call("DELETE", "/v1/webhooks/endpoints/\(endpointID)", token: key).status == 204)
        let link = try await app.call("POST", "/v1/console/links", token: key, body: #"{"agent_id":"agent-7f3c"}"#)
        let code = String((try link.json()["url"] as? String ?? "").split(separator: "=").last ?? "")
        #expect(try await app.call("POST", "/v1/console/sessions", body: #"{"code":"\#(code)"}"#).status == 201)
        #expect(try await app.call("DELETE", "/v1/sessions/current", token: other).status == 204)
        #expect(try await app.call("DELETE", "/v1/users/alice-7f3c/sessions", token: key).status == 204)

        let actions = try await Self.entries(app, tenant: tenant.id).map(\.action)
        #expect(actions == [
            "tenant.created", "api_key.created", "api_key.revoked", "session.created", "session.created", "session.created",
            "interaction.claimed", "interaction.assigned", "interaction.unassigned", "interaction.viewed", "interaction.viewed",
            "settings.updated", "webhook_endpoint.created", "webhook_endpoint.updated", "webhook_endpoint.secret_rotated",
            "webhook_endpoint.deleted", "console_link.created", "session.created", "session.revoked", "sessions.revoked",
        ])
        let claim = try await app.database.query("""
            SELECT actor_kind, actor_id, target_id, request_id, address FROM audit_events WHERE action = 'interaction.claimed'
            """)
        #expect(try claim.first?.decode("actor_kind", as: String.self) == "agent")
        #expect(try claim.first?.decode("request_id", as: String.self) == "claim-request-1")
        #expect(try claim.first?.decode("address", as: String.self) == "127.0.0.1")
        #expect(try claim.first?.decode("target_id", as: String.self) == id)
        // End users appear by pseudonym only: no user id is anywhere in the trail.
        let leaked = try await Self.count(app, """
            SELECT count(*) AS n FROM audit_events WHERE concat_ws('|', actor_id, target_id) ~ '(alice|agent)-(7f3c|8e21)'
            """)
        #expect(leaked == 0)
        let pseudonyms = try await Self.count(app, "SELECT count(DISTINCT pseudonym) AS n FROM audit_pseudonyms")
        #expect(pseudonyms == 3)
        await app.stop()
    }

    @Test func aFailedActionWritesNone() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let rival = try await app.createSession(apiKey: who.apiKey, user: "agent-9", role: "agent")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent).status == 200)
        let before = try await Self.count(app, "SELECT count(*) AS n FROM audit_events")
        // Refused inside the transaction (after the row lock): another agent holds it.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: rival).status == 409)
        #expect(try await app.call("POST", "/v1/sessions", token: who.apiKey, body: #"{"user_id":"x","role":"boss"}"#).status == 400)
        #expect(try await app.call("PATCH", "/v1/settings", token: who.apiKey, body: #"{"auto_assign":"lottery"}"#).status == 400)
        #expect(try await app.call("DELETE", "/v1/webhooks/endpoints/\(UUID())", token: who.apiKey).status == 404)
        #expect(try await app.call("DELETE", "/v1/admin/tenants/\(UUID())/keys/\(UUID())", token: TestApp.adminToken).status == 404)
        #expect(try await Self.count(app, "SELECT count(*) AS n FROM audit_events") == before)
        await app.stop()
    }

    @Test func theTrailRefusesChangesAndDeletions() async throws {
        let app = try await TestApp.start()
        _ = try await app.createTenant("Append only")
        #expect(await eventually { (try? await Self.count(app, "SELECT count(*) AS n FROM audit_seals")) == 1 })
        for statement in ["UPDATE audit_events SET action = 'nothing.happened'", "DELETE FROM audit_events",
                          "TRUNCATE audit_events CASCADE", "UPDATE audit_seals SET seal = '\\x00'", "DELETE FROM audit_seals",
                          "TRUNCATE audit_seals"] {
            do {
                _ = try await app.database.query(statement)
                Issue.record("\(statement) was allowed")
            } catch {
                #expect("\(error)".contains("append-only"), "\(statement): \(error)")
            }
        }
        #expect(try await Self.count(app, "SELECT count(*) AS n FROM audit_events WHERE action = 'tenant.created'") == 1)
        await app.stop()
    }

    @Test func theListPagesAndFiltersWithinItsTenant() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let stranger = try await app.createTenant("Stranger")
        for user in 0 ..< 5 { _ = try await app.createSession(apiKey: who.apiKey, user: "u\(user)") }
        var seen: [[String: Any]] = []
        var cursor = ""
        repeat {
            let page = try await app.call("GET", "/v1/audit?limit=3\(cursor)", token: who.apiKey).json()
            seen += page["items"] as? [[String: Any]] ?? []
            cursor = (page["next_cursor"] as? String).map { "&cursor=\($0)" } ?? ""
        } while !cursor.isEmpty
        // The tenant's creation, its three people's sessions and the five.
        #expect(seen.count == 9)
        #expect(seen.allSatisfy { ($0["tenant_id"] as? String) != stranger.id })
        let sessions = try await app.call("GET", "/v1/audit?action=session.created&limit=100", token: who.apiKey).json()
        #expect((sessions["items"] as? [[String: Any]])?.count == 8)
        let keyID = try #require((seen.first?["actor"] as? [String: Any]).flatMap { _ in
            (seen.dropFirst().first?["actor"] as? [String: Any])?["id"] as? String })
        let byKey = try await app.call("GET", "/v1/audit?actor=\(keyID)", token: who.apiKey).json()
        #expect((byKey["items"] as? [[String: Any]])?.count == 8)
        let future = try await app.call("GET", "/v1/audit?since=2999-01-01T00:00:00Z", token: who.apiKey).json()
        #expect((future["items"] as? [[String: Any]])?.isEmpty == true)
        let everyone = try await app.call("GET", "/v1/admin/audit?limit=500", token: TestApp.adminToken).json()
        #expect((everyone["items"] as? [[String: Any]])?.count == 10)
        let one = try await app.call("GET", "/v1/admin/audit?tenant=\(stranger.id)", token: TestApp.adminToken).json()
        #expect((one["items"] as? [[String: Any]])?.count == 1)
        for (path, token, status) in [("/v1/audit?since=yesterday", who.apiKey, 400), ("/v1/audit?limit=0", who.apiKey, 400),
                                      ("/v1/audit?cursor=-4", who.apiKey, 400), ("/v1/audit", who.agent, 401),
                                      ("/v1/audit", nil, 401), ("/v1/admin/audit", who.apiKey, 401)] {
            let refused = try await app.call("GET", path, token: token)
            #expect(refused.status == status, "\(path)")
            #expect(refused.header("Content-Type") == "application/problem+json")
        }
        await app.stop()
    }

    /// Retention deletes entries (with their seals) past `AUDIT_RETENTION_DAYS` and nothing newer; the cut-off it
    /// names lets through only older rows.
    @Test func retentionDeletesOnlyWhatIsPastIt() async throws {
        let app = try await TestApp.start()
        // A chain of its own (no tenant row needed), written in time order as a real one is.
        let tenant = UUID()
        for age in [500, 401, 399, 10] {
            _ = try await app.database.query("""
                WITH e AS (
                    INSERT INTO audit_events (tenant_id, actor_kind, actor_id, action, target_kind, target_id, created_at)
                    VALUES ($1::uuid, 'admin', 'operator', 'aged.\(age)', 'tenant', 't', now() - make_interval(days => $2::int))
                    RETURNING id
                )
                SELECT id FROM e
                """, [tenant, age])
            // Each sealed before the next is written: a seal closes a round's entries, and goes when its newest does.
            #expect(await eventually { (try? await Self.count(app, Self.unsealed)) == 0 })
        }
        // Deleting a recent row under a cut-off in the past is still refused.
        do {
            _ = try await app.database.query("""
                WITH cut AS (SELECT set_config('switchboard.audit_purge_before', (now() - interval '400 days')::text, true))
                DELETE FROM audit_events WHERE action = 'aged.10' AND EXISTS (SELECT 1 FROM cut)
                """)
            Issue.record("a recent entry was deleted")
        } catch {
            #expect("\(error)".contains("append-only"))
        }
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let deleted = try await AuditRetention(pool: pool, days: 400).prune()
        await pool.close()
        #expect(deleted == 2)
        let left = try await app.database.query("SELECT action FROM audit_events WHERE action LIKE 'aged.%' ORDER BY id")
            .map { try $0.decode("action", as: String.self) }
        #expect(left == ["aged.399", "aged.10"])
        #expect(try await Self.count(app, """
            SELECT count(*) AS n FROM audit_seals s WHERE NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.id = s.event_id)
            """) == 0)
        let intact = try await Self.verify(app.database, tenant: tenant.uuidString)
        #expect(intact.status == 0, "\(intact.output)")
        await app.stop()
    }

    /// Thirty concurrent first uses of one user's pseudonym agree on it.
    @Test func concurrentFirstUsesShareOnePseudonym() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant("Race")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 30 { group.addTask { _ = try await app.createSession(apiKey: tenant.apiKey, user: "racer") } }
            try await group.waitForAll()
        }
        #expect(try await Self.count(app, """
            SELECT count(DISTINCT target_id) AS n FROM audit_events WHERE action = 'session.created'
            """) == 1)
        await app.stop()
    }

    /// Entries not sealed yet.
    static let unsealed = """
        SELECT count(*) AS n FROM audit_events e
        WHERE NOT EXISTS (SELECT 1 FROM audit_seals s WHERE e.id = ANY(coalesce(s.entries, ARRAY[s.event_id])))
        """

    static func verify(_ database: TestDatabase, tenant: String) async throws -> (status: Int32, output: String) {
        try await onThread {
            let child = try ChildProcess(TestEnvironment.binary.path, ["audit", "verify", "--tenant", tenant],
                                         environment: ["DATABASE_URL": database.url, "AUDIT_SEAL_KEY": TestApp.auditSealKeyText])
            let output = child.readToEnd()
            return (child.wait(), output)
        }
    }

    @Test func verifyNamesAChangedEntryAndOneSealedWithoutTheKey() async throws {
        let database = try await TestDatabase.create()
        let app = try await TestApp.start(database: database)
        let tenant = try await app.createTenant("Sealed")
        for user in 0 ..< 6 { _ = try await app.createSession(apiKey: tenant.apiKey, user: "s\(user)") }
        #expect(await eventually { (try? await Self.count(app, Self.unsealed)) == 0 })
        let intact = try await Self.verify(database, tenant: tenant.id)
        #expect(intact.status == 0 && intact.output.contains("intact: 7 entries checked"), "\(intact.output)")

        // A row changed behind the service's back (the trigger disabled to do it).
        let changed = try #require(try await app.database.query("""
            SELECT id FROM audit_events WHERE tenant_id = $1::uuid ORDER BY id OFFSET 3 LIMIT 1
            """, [UUID(uuidString: tenant.id)]).first?.decode("id", as: Int64.self))
        _ = try await app.database.query("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
        _ = try await app.database.query("UPDATE audit_events SET address = '203.0.113.9' WHERE id = $1", [changed])
        _ = try await app.database.query("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only")
        let broken = try await Self.verify(database, tenant: tenant.id)
        #expect(broken.status == 1)
        #expect(broken.output.contains("position 4: the seal does not match entry \(changed)"), "\(broken.output)")

        // The rows below are added behind the service's back: it stops first, or its sealer could seal the forged
        // row before the forged seal goes in (a duplicate position), or seal the stray row before it is checked.
        await app.stopKeepingDatabase()
        // A row inserted with a seal recomputed without the key (SHA-256 over the same bytes): named too.
        let stopped = try await database.query("""
            SELECT max(position) AS p, (SELECT seal FROM audit_seals WHERE tenant_id = $1::uuid ORDER BY position DESC LIMIT 1) AS s
            FROM audit_seals WHERE tenant_id = $1::uuid
            """, [UUID(uuidString: tenant.id)])
        let last: Int64 = try stopped[0].decode("p")
        let previous: [UInt8] = try stopped[0].decode("s")
        let forged = try #require(try await database.query("""
            INSERT INTO audit_events (tenant_id, actor_kind, actor_id, action, target_kind, target_id)
            VALUES ($1::uuid, 'admin', 'operator', 'api_key.created', 'api_key', 'k') RETURNING \(AuditEntry.columns())
            """, [UUID(uuidString: tenant.id)]).first.map(AuditEntry.init(row:)))
        var message = previous
        withUnsafeBytes(of: (last + 1).bigEndian) { message += $0 }
        message += forged.canonicalBytes
        let unkeyed = SHA256.hash(message)
        _ = try await database.query("""
            INSERT INTO audit_seals (tenant_id, position, event_id, seal, created_at) VALUES ($1::uuid, $2, $3, $4, now())
            """, [UUID(uuidString: tenant.id), last + 1, forged.id, unkeyed])
        let forgedReport = try await Self.verify(database, tenant: tenant.id)
        #expect(forgedReport.output.contains("position \(last + 1): the seal does not match entry \(forged.id)"), "\(forgedReport.output)")
        // And a row with no seal that is not waiting for one: slipped in behind the seals (a transaction id older
        // than the last entry sealed). A row added at the head is indistinguishable from an entry still to seal,
        // and the sealer will seal it, as it seals whatever a writer of the table appends.
        let stray = try #require(try await database.query("""
            INSERT INTO audit_events (tenant_id, actor_kind, actor_id, action, target_kind, target_id, xid)
            VALUES ($1::uuid, 'admin', 'operator', 'tenant.created', 'tenant', 't', '3') RETURNING id
            """, [UUID(uuidString: tenant.id)]).first?.decode("id", as: Int64.self))
        let strayReport = try await Self.verify(database, tenant: tenant.id)
        #expect(strayReport.output.contains("entry \(stray) has no seal and is not waiting for one"), "\(strayReport.output)")
        await database.drop()
    }
}
