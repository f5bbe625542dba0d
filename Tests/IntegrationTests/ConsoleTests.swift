import Foundation
import Testing
import TestSupport

/// The agent console's server side: its files and their headers, and the one-time links agents sign in with —
/// minted by the tenant's backend or by the `console-link` command, traded once for an agent session.
@Suite("Agent console: files and sign-in links", .timeLimit(.minutes(10)))
struct ConsoleTests {
    @Test func filesAreServedWithTheirSecurityHeaders() async throws {
        let app = try await TestApp.start()
        let moved = try await app.call("GET", "/console")
        #expect(moved.status == 308 && moved.header("Location") == "/console/")
        let page = try await app.call("GET", "/console/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Content-Security-Policy")
            == "default-src 'self'; connect-src 'self'; img-src 'self' blob:; frame-ancestors 'none'")
        #expect(page.header("X-Content-Type-Options") == "nosniff" && page.header("Referrer-Policy") == "no-referrer")
        #expect(page.header("Cache-Control") == "no-cache")
        let etag = try #require(page.header("ETag"))
        #expect(try await app.call("GET", "/console/", headers: ["If-None-Match": etag]).status == 304)
        var total = page.body.count
        for (file, type) in [("app.js", "text/javascript; charset=utf-8"), ("style.css", "text/css; charset=utf-8")] {
            let response = try await app.call("GET", "/console/\(file)")
            #expect(response.status == 200 && response.header("Content-Type") == type)
            #expect(response.header("Content-Security-Policy") != nil)
            total += response.body.count
        }
        #expect(total <= 150 * 1024, "a first load transfers \(total) bytes")
        let missing = try await app.call("GET", "/console/other.js")
        #expect(missing.status == 404 && missing.header("Content-Type") == "application/problem+json")
        await app.stop()
    }

    /// `CONSOLE=0`: neither the page nor its links are served.
    @Test func theConsoleCanBeTurnedOff() async throws {
        let app = try await TestApp.start(console: false)
        let who = try await InteractionsEndToEndTests.people(app)
        #expect(try await app.call("GET", "/console/").status == 404)
        #expect(try await app.call("GET", "/console/app.js").status == 404)
        #expect(try await app.call("POST", "/v1/console/links", token: who.apiKey, body: #"{"agent_id":"a"}"#).status == 404)
        await app.stop()
    }

    @Test func aLinkOpensOneAgentSessionOnce() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let minted = try await app.call("POST", "/v1/console/links", token: who.apiKey,
                                        body: #"{"agent_id":"agent-9","ttl_seconds":60,"session_ttl_seconds":3600}"#)
        #expect(minted.status == 201)
        let url = try #require(try minted.json()["url"] as? String)
        #expect(url.hasPrefix("/console/#code=scl_"), "without PUBLIC_URL, the path alone: \(url)")
        let code = String(url.dropFirst("/console/#code=".count))
        let opened = try await app.call("POST", "/v1/console/sessions", body: #"{"code":"\#(code)"}"#)
        #expect(opened.status == 201)
        let token = try #require(try opened.json()["token"] as? String)
        #expect(try opened.json()["user_id"] as? String == "agent-9" && opened.json()["role"] as? String == "agent")
        let current = try await app.call("GET", "/v1/sessions/current", token: token).json()
        #expect(current["user_id"] as? String == "agent-9" && current["role"] as? String == "agent")
        // Once only; unknown codes alike; the code is stored hashed.
        for body in [#"{"code":"\#(code)"}"#, #"{"code":"scl_nothing"}"#, #"{"code":""}"#] {
            let refused = try await app.call("POST", "/v1/console/sessions", body: body)
            #expect(refused.status == 401, "\(body)")
            #expect(try refused.json()["type"] as? String == "/problems/unusable-link")
        }
        let stored = try await app.database.query("SELECT count(*) AS n FROM console_links WHERE encode(code_hash, 'escape') LIKE $1", ["%\(code)%"])
        #expect(try stored[0].decode("n", as: Int64.self) == 0)
        // Expired, and minted by a key since revoked: refused too.
        let late = try await app.call("POST", "/v1/console/links", token: who.apiKey, body: #"{"agent_id":"agent-9"}"#)
        let lateCode = try #require((try late.json()["url"] as? String)?.split(separator: "=").last.map(String.init))
        let orphan = try await app.call("POST", "/v1/console/links", token: who.apiKey, body: #"{"agent_id":"agent-9"}"#)
        let orphanCode = try #require((try orphan.json()["url"] as? String)?.split(separator: "=").last.map(String.init))
        _ = try await app.database.query("""
            UPDATE console_links SET expires_at = now() - interval '1 second' WHERE code_hash = sha256(convert_to($1, 'UTF8'))
            """, [lateCode])
        _ = try await app.database.query("UPDATE api_keys SET revoked_at = now()")
        for code in [lateCode, orphanCode] {
            #expect(try await app.call("POST", "/v1/console/sessions", body: #"{"code":"\#(code)"}"#).status == 401)
        }
        let fresh = try await app.createTenant("Another")
        let other = (apiKey: fresh.apiKey, agent: try await app.createSession(apiKey: fresh.apiKey, user: "a", role: "agent"))
        // Validation.
        for body in [#"{"agent_id":""}"#, #"{"agent_id":"a","ttl_seconds":601}"#, #"{"agent_id":"a","ttl_seconds":0}"#,
                     #"{"agent_id":"a","session_ttl_seconds":10}"#, #"{}"#] {
            #expect(try await app.call("POST", "/v1/console/links", token: other.apiKey, body: body).status == 400, "\(body)")
        }
        #expect(try await app.call("POST", "/v1/console/links", token: other.agent, body: #"{"agent_id":"a"}"#).status == 401)
        await app.stop()
    }

    @Test func theCommandMintsALinkForOperators() async throws {
        let database = try await TestDatabase.create()
        let app = try await TestApp.start(database: database)
        let tenant = try await app.createTenant("Ops")
        let (status, output) = try await onThread { () -> (Int32, String) in
            let child = try ChildProcess(TestEnvironment.binary.path,
                                         ["console-link", "--tenant", tenant.id, "--agent", "agent-1", "--ttl", "120"],
                                         environment: ["DATABASE_URL": database.url, "PUBLIC_URL": "https://support.example.com/"])
            let output = child.readToEnd()
            return (child.wait(), output)
        }
        #expect(status == 0, "\(output)")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String])
        let url = try #require(fields["url"])
        #expect(url.hasPrefix("https://support.example.com/console/#code=scl_"))
        let code = String(url.split(separator: "=").last ?? "")
        #expect(try await app.call("POST", "/v1/console/sessions", body: #"{"code":"\#(code)"}"#).status == 201)
        for arguments in [["console-link"], ["console-link", "--tenant", "x", "--agent", "a"],
                          ["console-link", "--tenant", tenant.id, "--agent", "a", "--ttl", "601"]] {
            let (refused, _) = try await onThread { () -> (Int32, String) in
                let child = try ChildProcess(TestEnvironment.binary.path, arguments, environment: ["DATABASE_URL": database.url])
                let output = child.readToEnd()
                return (child.wait(), output)
            }
            #expect(refused == 2, "\(arguments)")
        }
        await app.stop()
    }
}
