import Coordination
import Foundation
import Postgres
import Testing
import TestSupport

@Suite("Accounts: tenants, keys, sessions, authentication, rate limits", .timeLimit(.minutes(10)))
struct AccountsEndToEndTests {
    @Test func adminCreatesTenantsAndKeysOnlyWithTheAdminToken() async throws {
        let app = try await TestApp.start()
        let created = try await app.call("POST", "/v1/admin/tenants", token: TestApp.adminToken, body: #"{"name":"Acme Bank"}"#)
        #expect(created.status == 201)
        let json = try created.json()
        #expect(json["name"] as? String == "Acme Bank")
        #expect((json["api_key"] as? String)?.hasPrefix("sbk_") == true)
        let tenantID = try #require(json["id"] as? String)

        #expect(try await app.call("POST", "/v1/admin/tenants", body: #"{"name":"x"}"#).status == 401)
        #expect(try await app.call("POST", "/v1/admin/tenants", token: "wrong-admin-token-0000000", body: #"{"name":"x"}"#).status == 401)
        #expect(try await app.call("POST", "/v1/admin/tenants", token: TestApp.adminToken, body: #"{"name":""}"#).status == 400)
        #expect(try await app.call("POST", "/v1/admin/tenants", token: TestApp.adminToken, body: #"{}"#).status == 400)

        let key = try await app.call("POST", "/v1/admin/tenants/\(tenantID)/keys", token: TestApp.adminToken)
        #expect(key.status == 201)
        let keyJSON = try key.json()
        let keyID = try #require(keyJSON["id"] as? String)
        let newKey = try #require(keyJSON["api_key"] as? String)
        #expect(try await app.call("POST", "/v1/admin/tenants/\(UUID().uuidString)/keys", token: TestApp.adminToken).status == 404)
        #expect(try await app.call("POST", "/v1/admin/tenants/not-a-uuid/keys", token: TestApp.adminToken).status == 404)

        // The new key works, then stops working once revoked.
        #expect(try await app.createSession(apiKey: newKey, user: "u1").hasPrefix("sbs_"))
        let revoked = try await app.call("DELETE", "/v1/admin/tenants/\(tenantID)/keys/\(keyID)", token: TestApp.adminToken)
        #expect(revoked.status == 204)
        let refused = try await app.call("POST", "/v1/sessions", token: newKey, body: #"{"user_id":"u","role":"customer"}"#)
        #expect(refused.status == 401)
        #expect(refused.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        #expect(try await app.call("DELETE", "/v1/admin/tenants/\(tenantID)/keys/\(UUID().uuidString)",
                                   token: TestApp.adminToken).status == 404)
        await app.stop()
    }

    @Test func adminAPIIsAbsentWithoutAnAdminToken() async throws {
        let app = try await TestApp.start(adminToken: nil)
        #expect(try await app.call("POST", "/v1/admin/tenants", token: TestApp.adminToken, body: #"{"name":"x"}"#).status == 404)
        await app.stop()
    }

    @Test func apiKeysAndTokensAreStoredOnlyAsHashes() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let token = try await app.createSession(apiKey: tenant.apiKey, user: "alice")
        let keys = try await app.database.query("SELECT key_hash, encode(key_hash, 'hex') AS hex FROM api_keys")
        let sessions = try await app.database.query("SELECT encode(token_hash, 'hex') AS hex FROM sessions")
        let dump = try await app.database.query("""
            SELECT coalesce(string_agg(t::text, ' '), '') AS dump FROM (
              SELECT row_to_json(api_keys)::text AS t FROM api_keys
              UNION ALL SELECT row_to_json(sessions)::text FROM sessions) rows
            """)
        let everything: String = try dump[0].decode("dump")
        #expect(!everything.contains(tenant.apiKey))
        #expect(!everything.contains(token))
        #expect(keys.count == 1)
        let expected = try await app.database.query("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex') AS hex", [tenant.apiKey])
        #expect(try keys[0].decode("hex", as: String.self) == expected[0].decode("hex", as: String.self))
        #expect(sessions.count == 1)
        await app.stop()
    }

    @Test func sessionsAreCreatedWithAnAPIKeyAndUsedByApps() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let created = try await app.call("POST", "/v1/sessions", token: tenant.apiKey,
                                         body: #"{"user_id":"alice","role":"agent","ttl_seconds":3600}"#)
        #expect(created.status == 201)
        let json = try created.json()
        #expect(json["user_id"] as? String == "alice")
        #expect(json["role"] as? String == "agent")
        #expect(json["expires_at"] is String)
        let token = try #require(json["token"] as? String)

        let current = try await app.call("GET", "/v1/sessions/current", token: token)
        #expect(current.status == 200)
        #expect(try current.json()["tenant_id"] as? String == tenant.id)

        for bad in [#"{"user_id":"","role":"agent"}"#, #"{"user_id":"a","role":"admin"}"#,
                    #"{"user_id":"a","role":"agent","ttl_seconds":5}"#, #"{"role":"agent"}"#] {
            let response = try await app.call("POST", "/v1/sessions", token: tenant.apiKey, body: bad)
            #expect(response.status == 400, "\(bad)")
            #expect(response.header("Content-Type") == "application/problem+json")
        }
        await app.stop()
    }

    @Test func badCredentialsAre401WithTheRightChallenge() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let token = try await app.createSession(apiKey: tenant.apiKey, user: "bob")

        let missing = try await app.call("GET", "/v1/sessions/current")
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == #"Bearer realm="switchboard""#)
        #expect(missing.header("Content-Type") == "application/problem+json")

        let malformed = try await app.call("GET", "/v1/sessions/current", headers: ["Authorization": "Basic Ym9iOnB3"])
        #expect(malformed.status == 401)
        #expect(malformed.header("WWW-Authenticate")?.contains(#"error="invalid_request""#) == true)

        let unknown = try await app.call("GET", "/v1/sessions/current", token: "sbs_" + String(repeating: "A", count: 43))
        #expect(unknown.status == 401)
        #expect(unknown.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)

        let garbage = try await app.call("GET", "/v1/sessions/current", token: "not-a-token")
        #expect(garbage.status == 401)
        #expect(garbage.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)

        // An API key where a session is required, and a session where an API key is required.
        let keyForSession = try await app.call("GET", "/v1/sessions/current", token: tenant.apiKey)
        #expect(keyForSession.status == 401)
        #expect(keyForSession.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        let sessionForKey = try await app.call("POST", "/v1/sessions", token: token, body: #"{"user_id":"x","role":"agent"}"#)
        #expect(sessionForKey.status == 401)
        #expect(sessionForKey.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        await app.stop()
    }

    @Test func expiredAndRevokedSessionsAre401InvalidToken() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let expiring = try await app.createSession(apiKey: tenant.apiKey, user: "carol", ttl: 60)
        _ = try await app.database.query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = 'carol'")
        let expired = try await app.call("GET", "/v1/sessions/current", token: expiring)
        #expect(expired.status == 401)
        #expect(expired.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        #expect(try expired.json()["detail"] as? String == "The token has expired.")

        let token = try await app.createSession(apiKey: tenant.apiKey, user: "dave")
        #expect(try await app.call("GET", "/v1/sessions/current", token: token).status == 200)
        #expect(try await app.call("DELETE", "/v1/sessions/current", token: token).status == 204)
        let revoked = try await app.call("GET", "/v1/sessions/current", token: token)
        #expect(revoked.status == 401)
        #expect(revoked.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        #expect(try revoked.json()["detail"] as? String == "The token has been revoked.")
        await app.stop()
    }

    @Test func revocationOnAnotherReplicaTakesEffectWithinFiveSeconds() async throws {
        let database = try await TestDatabase.create()
        let first = try await TestApp.start(database: database)
        let second = try await TestApp.start(database: database)
        let tenant = try await first.createTenant()
        let token = try await first.createSession(apiKey: tenant.apiKey, user: "erin")
        #expect(try await second.call("GET", "/v1/sessions/current", token: token).status == 200) // now cached there
        #expect(try await first.call("DELETE", "/v1/sessions/current", token: token).status == 204)
        // The second replica cached the token before this instant; however late the next call comes after five
        // seconds from here, it must be refused.
        let start = ContinuousClock.now
        try await ContinuousClock().sleep(until: start + .seconds(5))
        #expect(try await second.call("GET", "/v1/sessions/current", token: token).status == 401)
        await first.app.shutdown()
        await second.stop()
    }

    @Test func rateLimitAnswers429WithHeadersThenRecovers() async throws {
        let app = try await TestApp.start(rateLimitPerMinute: 120)
        let tenant = try await app.createTenant()
        let token = try await app.createSession(apiKey: tenant.apiKey, user: "frank")
        var last = try await app.call("GET", "/v1/sessions/current", token: token)
        #expect(last.header("RateLimit-Policy") == #""default";q=120;w=60"#)
        #expect(last.header("RateLimit")?.hasPrefix(#""default";r="#) == true)
        var allowed = 1
        let start = ContinuousClock.now
        while last.status == 200 && allowed < 400 {
            last = try await app.call("GET", "/v1/sessions/current", token: token)
            if last.status == 200 { allowed += 1 }
        }
        #expect(last.status == 429)
        // A burst of 120, plus what refilled (2 a second) while the loop ran.
        let elapsed = ContinuousClock.now - start
        let refilled = Int(elapsed.inSeconds * 2) + 1
        #expect((119 ... 120 + refilled).contains(allowed), "allowed \(allowed) in \(elapsed)")
        #expect(last.header("Content-Type") == "application/problem+json")
        let retryAfter = try #require(last.header("Retry-After").flatMap { Int($0) })
        #expect((1 ... 2).contains(retryAfter))
        #expect(last.header("RateLimit-Policy") == #""default";q=120;w=60"#)
        #expect(last.header("RateLimit")?.hasPrefix(#""default";r=0;t="#) == true)
        // Another principal is not affected.
        let other = try await app.createSession(apiKey: tenant.apiKey, user: "grace")
        #expect(try await app.call("GET", "/v1/sessions/current", token: other).status == 200)
        try await Task.sleep(for: .seconds(retryAfter))
        #expect(try await app.call("GET", "/v1/sessions/current", token: token).status == 200)
        await app.stop()
    }

    @Test func everySessionOfOneUserSharesOneRateLimitBucket() async throws {
        // Six a minute: one token comes back every 10 s, far longer than the test takes even under a sanitizer, so
        // what it sees does not depend on how fast the machine is.
        let app = try await TestApp.start(rateLimitPerMinute: 6)
        let tenant = try await app.createTenant()
        let other = try await app.createTenant()
        let first = try await app.createSession(apiKey: tenant.apiKey, user: "ivan")
        var spent = 0
        let start = ContinuousClock.now
        while try await app.call("GET", "/v1/sessions/current", token: first).status == 200 && spent < 200 { spent += 1 }
        let refilled = Int((ContinuousClock.now - start).inSeconds / 10)
        #expect((6 ... 6 + refilled).contains(spent), "the first session got \(spent) requests")
        // A token refresh (or a script minting sessions) brings no fresh allowance: the fourth session is refused.
        var later: [String] = []
        for _ in 0 ..< 3 { later.append(try await app.createSession(apiKey: tenant.apiKey, user: "ivan")) }
        let fourth = try await app.call("GET", "/v1/sessions/current", token: later[2])
        #expect(fourth.status == 429)
        #expect(fourth.header("RateLimit")?.hasPrefix(#""default";r=0;"#) == true)
        // The same user id as an agent, or in another tenant, is someone else; so is the tenant's API key.
        let agent = try await app.createSession(apiKey: tenant.apiKey, user: "ivan", role: "agent")
        #expect(try await app.call("GET", "/v1/sessions/current", token: agent).status == 200)
        let elsewhere = try await app.createSession(apiKey: other.apiKey, user: "ivan")
        #expect(try await app.call("GET", "/v1/sessions/current", token: elsewhere).status == 200)
        #expect(try await app.call("GET", "/v1/webhooks/endpoints", token: tenant.apiKey).status == 200)
        await app.stop()
    }

    @Test func aThousandConcurrentRequestsWithOneColdTokenCauseOneLookup() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let token = try await app.createSession(apiKey: tenant.apiKey, user: "heidi")
        let lookupsBefore = try await Self.sessionLookups(app)
        let port = app.port
        let statuses = try await onThread { () -> [Int] in
            let sockets = try (0 ..< 1000).map { _ in try RawSocket(port: port) }
            for socket in sockets {
                try socket.send("GET /v1/sessions/current HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            }
            return try sockets.map { try $0.readResponse(timeout: 30).status }
        }
        #expect(statuses.count == 1000)
        #expect(statuses.allSatisfy { $0 == 200 })
        let lookupsAfter = try await Self.sessionLookups(app)
        #expect(lookupsAfter - lookupsBefore == 1)
        await app.stop()
    }

    /// Session lookups counted by Postgres itself.
    static func sessionLookups(_ app: TestApp) async throws -> Int {
        try await app.database.statementCalls(like: "%JOIN sessions s ON s.token_hash%")
    }

    @Test func noSecretEverReachesTheLog() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let token = try await app.createSession(apiKey: tenant.apiKey, user: "ivan")
        _ = try await app.call("GET", "/v1/sessions/current", token: token)
        _ = try await app.call("GET", "/v1/sessions/current", token: "sbs_" + String(repeating: "B", count: 43))
        let interaction = try await app.call("POST", "/v1/interactions", token: token, body: #"{"subject":"s"}"#).json()
        let secretText = "my PIN is 4321, zebra-quartz"
        _ = try await app.call("POST", "/v1/interactions/\(interaction["id"] as? String ?? "")/messages", token: token,
                               body: #"{"text":"\#(secretText)"}"#)
        _ = try await app.call("DELETE", "/v1/sessions/current", token: token)
        await app.stop()
        let log = app.log.all.joined(separator: "\n")
        #expect(!log.contains("zebra-quartz"), "message text must never be logged")
        #expect(app.log.all.contains { $0.contains(#""route":"/v1/sessions/current""#) })
        for secret in [tenant.apiKey, token, TestApp.adminToken, "Bearer", "Authorization", "sbs_", "sbk_"] {
            #expect(!log.contains(secret), "log contains \(secret)")
        }
    }
}

@Suite("The tenants command", .timeLimit(.minutes(10)))
struct TenantsCommandTests {
    @Test func createsATenantWhoseKeyWorks() async throws {
        let database = try await TestDatabase.create()
        let (status, output) = try await onThread { () -> (Int32, String) in
            let child = try ChildProcess(TestEnvironment.binary.path, ["tenants", "create", "Acme Bank"],
                                         environment: ["DATABASE_URL": database.url])
            let output = child.readToEnd()
            return (child.wait(), output)
        }
        #expect(status == 0, "\(output)")
        // The same JSON object, with the same names, as POST /v1/admin/tenants answers.
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String])
        #expect(Set(fields.keys) == ["id", "name", "api_key_id", "api_key"])
        let apiKey = try #require(fields["api_key"])
        #expect(fields["id"].flatMap(UUID.init(uuidString:)) != nil)
        #expect(fields["name"] == "Acme Bank")
        let app = try await TestApp.start(database: database)
        #expect(try await app.createSession(apiKey: apiKey, user: "first").hasPrefix("sbs_"))
        let names = try await database.query("SELECT name FROM tenants")
        #expect(try names.map { try $0.decode("name", as: String.self) } == ["Acme Bank"])
        await app.stop()
    }

    @Test func refusesBadUsage() async throws {
        let (status, _) = try await onThread { () -> (Int32, String) in
            let child = try ChildProcess(TestEnvironment.binary.path, ["tenants", "delete"],
                                         environment: ["DATABASE_URL": TestEnvironment.databaseURL])
            let output = child.readToEnd()
            return (child.wait(), output)
        }
        #expect(status == 2)
    }
}
