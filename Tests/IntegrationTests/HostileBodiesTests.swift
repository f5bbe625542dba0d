import App
import Foundation
import Postgres
import Testing

/// Bad input is a clean 4xx naming what is wrong — never a 500, never a silently different request.
@Suite("Hostile bodies, cursors and dates", .timeLimit(.minutes(10)))
struct HostileBodiesTests {
    static func expectBadRequest(_ response: RawResponse, field: String?, _ comment: String) throws {
        #expect(response.status == 400, "\(comment): \(response.status) \(response.text)")
        #expect(response.header("Content-Type") == "application/problem+json", "\(comment)")
        if let field { #expect(try response.json()["parameter"] as? String == field, "\(comment)") }
    }

    @Test func uPlus0000InAnyStringFieldIs400NamingTheField() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let item = try await app.call("POST", "/v1/feeds/news/items", token: who.agent, body: #"{"title":"ok"}"#)
        let itemID = try #require(try item.json()["id"] as? String)
        let nul = #"a\u0000b"#
        let cases: [(String, String, String?, String, String)] = [
            ("POST", "/v1/feeds/news/items", who.agent, #"{"title":"\#(nul)"}"#, "title"),
            ("POST", "/v1/feeds/news/items", who.agent, #"{"title":"t","body":"\#(nul)"}"#, "body"),
            ("PATCH", "/v1/feeds/news/items/\(itemID)", who.agent, #"{"title":"\#(nul)"}"#, "title"),
            ("POST", "/v1/interactions", who.alice, #"{"subject":"\#(nul)"}"#, "subject"),
            ("POST", "/v1/interactions/\(id)/messages", who.alice, #"{"text":"\#(nul)"}"#, "text"),
            ("POST", "/v1/interactions/\(id)/fail", who.agent, #"{"reason":"\#(nul)"}"#, "reason"),
            ("POST", "/v1/admin/tenants", TestApp.adminToken, #"{"name":"\#(nul)"}"#, "name"),
            ("POST", "/v1/sessions", who.apiKey, #"{"user_id":"\#(nul)","role":"customer"}"#, "user_id"),
            ("POST", "/v1/interactions/\(id)/messages", who.alice, "{\"text\":\"raw \u{0} byte\"}", "text"),
        ]
        for (method, path, token, body, field) in cases {
            try Self.expectBadRequest(try await app.call(method, path, token: token, body: body), field: field, "\(method) \(path) \(field)")
        }
        await app.stop()
    }

    @Test func duplicateKeysAndTrailingCommasAreRefusedNotGuessed() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let duplicate = try await app.call("POST", "/v1/sessions", token: tenant.apiKey,
                                           body: #"{"user_id":"mallory","role":"agent","role":"customer"}"#)
        try Self.expectBadRequest(duplicate, field: "role", "duplicate role")
        let trailing = try await app.call("POST", "/v1/sessions", token: tenant.apiKey, body: #"{"user_id":"a","role":"customer",}"#)
        try Self.expectBadRequest(trailing, field: nil, "trailing comma")
        let sessions = try await app.database.query("SELECT count(*) AS n FROM sessions")
        #expect(try sessions[0].decode("n", as: Int64.self) == 0, "nothing was created")
        for body in [#"[]"#, #""text""#, #"42"#, #"null"#] {
            let response = try await app.call("POST", "/v1/sessions", token: tenant.apiKey, body: body)
            try Self.expectBadRequest(response, field: nil, body)
            #expect(!response.text.contains("Dictionary") && !response.text.contains("Swift"), "no type names: \(response.text)")
        }
        await app.stop()
    }

    @Test func unknownFieldsAreRefusedNamingThemNotSilentlyDropped() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let typo = try await app.call("POST", "/v1/interactions", token: who.alice, body: #"{"title":"x"}"#)
        try Self.expectBadRequest(typo, field: "title", "a typo of subject")
        #expect(try typo.json()["detail"] as? String == "Unknown field 'title': this body takes only subject.")
        let cases: [(String, String, String?, String, String)] = [
            ("POST", "/v1/interactions/\(id)/messages", who.alice, #"{"text":"hi","txet":"hi"}"#, "txet"),
            ("POST", "/v1/interactions/\(id)/typing", who.alice, #"{"typing":true,"until":5}"#, "until"),
            ("POST", "/v1/interactions/\(id)/read", who.alice, #"{"event_id":1,"eventId":1}"#, "eventId"),
            ("POST", "/v1/interactions/\(id)/assign", who.agent, #"{"agent_id":null,"agent":"x"}"#, "agent"),
            ("POST", "/v1/sessions", who.apiKey, #"{"user_id":"u","role":"customer","ttl":60}"#, "ttl"),
            ("POST", "/v1/admin/tenants", TestApp.adminToken, #"{"name":"n","plan":"gold"}"#, "plan"),
            ("POST", "/v1/feeds/news/items", who.agent, #"{"title":"t","summary":"s"}"#, "summary"),
            ("POST", "/v1/webhooks/endpoints", who.apiKey, #"{"url":"https://example.com/h","events":[],"secret":"s"}"#, "secret"),
        ]
        for (method, path, token, body, field) in cases {
            let response = try await app.call(method, path, token: token, body: body)
            try Self.expectBadRequest(response, field: field, "\(method) \(path) \(field)")
            #expect((try response.json()["detail"] as? String)?.contains("'\(field)'") == true, "\(response.text)")
        }
        let interactions = try await app.database.query("SELECT count(*) AS n FROM interactions")
        #expect(try interactions[0].decode("n", as: Int64.self) == 1, "only the interaction the test opened")
        let messages = try await app.database.query("SELECT count(*) AS n FROM interaction_events WHERE kind = 'message'")
        #expect(try messages[0].decode("n", as: Int64.self) == 0)
        await app.stop()
    }

    @Test func aNumberThatIsNotAnIntegerIsNamedWithItsRule() async throws {
        let app = try await TestApp.start()
        let tenant = try await app.createTenant()
        let cases: [(String, String)] = [("1.5", "must be a whole number; 1.5 is not."),
                                         ("1e30", "must be an integer between"), ("-1e300", "is out of range"),
                                         ("99999999999999999999", "is out of range")]
        for (number, says) in cases {
            let response = try await app.call("POST", "/v1/sessions", token: tenant.apiKey,
                                              body: #"{"user_id":"u","role":"customer","ttl_seconds":\#(number)}"#)
            try Self.expectBadRequest(response, field: "ttl_seconds", number)
            let detail = try response.json()["detail"] as? String ?? ""
            #expect(detail.hasPrefix("The field 'ttl_seconds' ") && detail.contains(says), "\(number): \(detail)")
        }
        let syntax = try await app.call("POST", "/v1/sessions", token: tenant.apiKey,
                                        body: "{\n  \"user_id\": \"u\",\n  role: \"customer\"\n}")
        try Self.expectBadRequest(syntax, field: nil, "an unquoted key")
        #expect(try syntax.json()["detail"] as? String
                == "Line 3, column 3: An object key must be a string in double quotes; found 'r'.")
        await app.stop()
    }

    @Test func forgedCursorsAre400() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        _ = try await app.call("POST", "/v1/feeds/news/items", token: who.agent, body: #"{"title":"ok"}"#)
        let id = UUID().uuidString.lowercased()
        for micros in ["9223372036854775807", "-9223372036854775808", "253402300800000000", "-62135596800000001"] {
            let cursor = Data("v1.\(micros).\(id)".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            for path in ["/v1/feeds/news?cursor=\(cursor)", "/v1/interactions?cursor=\(cursor)"] {
                try Self.expectBadRequest(try await app.call("GET", path, token: who.agent), field: "cursor", path)
            }
        }
        await app.stop()
    }

    @Test func aMessageCursorPastTheLogIs400NotAnEmptyPage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"hi"}"#).status == 201)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/messages?cursor=2", token: who.alice).status == 200)
        try Self.expectBadRequest(try await app.call("GET", "/v1/interactions/\(id)/messages?cursor=5000", token: who.alice),
                                  field: "cursor", "a cursor from before the renumbering")
        await app.stop()
    }

    @Test func datesThatDoNotExistAre400() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        for date in ["2024-02-30T10:00:00Z", "2024-01-01T00:00:00+25:00", "2024-02-30"] {
            let response = try await app.call("POST", "/v1/feeds/news/items", token: who.agent,
                                              body: #"{"title":"t","published_at":"\#(date)"}"#)
            try Self.expectBadRequest(response, field: "published_at", date)
        }
        await app.stop()
    }

    /// While migrations are still running, API calls are 503 with Retry-After, as during an outage — not 500.
    @Test func beforeMigrationsTheAPIAnswers503() async throws {
        let database = try await TestDatabase.create()
        let slow = Migration(version: 99_999, name: "slow", sql: "SELECT pg_sleep(3)")
        let configuration = Configuration(server: .init(host: "127.0.0.1", port: 0, threads: 2), databaseURL: database.url,
                                          logLevel: .error, adminToken: TestApp.adminToken)
        let app = Application(configuration: configuration, logger: Logger(level: .error), migrations: Migrations.all + [slow])
        let port = try await app.start()
        let response = try await request(port: port, "POST", "/v1/admin/tenants",
                                         headers: ["Authorization": "Bearer \(TestApp.adminToken)"], body: #"{"name":"x"}"#)
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "1")
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(try await request(port: port, "GET", "/healthz").status == 200)
        await app.waitUntilMigrated()
        #expect(try await request(port: port, "POST", "/v1/admin/tenants", headers: ["Authorization": "Bearer \(TestApp.adminToken)"],
                                  body: #"{"name":"x"}"#).status == 201)
        await app.shutdown()
        await database.drop()
    }
}
