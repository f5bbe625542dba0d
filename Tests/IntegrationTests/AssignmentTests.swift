import Foundation
import Testing

@Suite("Assignment: claim, assign, the inbox filter", .timeLimit(.minutes(10)))
struct AssignmentTests {
    static func assignmentPayloads(_ app: TestApp) async throws -> [NSDictionary] {
        let rows = try await app.database.query("""
            SELECT payload::text AS payload FROM interaction_events WHERE kind = 'assignment' ORDER BY interaction_id, seq
            """)
        return try rows.map { row in
            try JSONSerialization.jsonObject(with: Data(try row.decode("payload", as: String.self).utf8)) as? NSDictionary ?? [:]
        }
    }

    static func ids(_ response: RawResponse) throws -> [String] {
        (try response.json()["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
    }

    @Test func claimAssignAndUnassign() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let colleague = try await app.createSession(apiKey: who.apiKey, user: "agent-8", role: "agent")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)

        let claimed = try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent)
        #expect(claimed.status == 200)
        #expect(try claimed.json()["assigned_agent_id"] as? String == "agent-7")
        #expect(try claimed.json()["id"] as? String == id)
        // Claiming again is a no-op; another agent's claim is refused.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent).status == 200)
        let refused = try await app.call("POST", "/v1/interactions/\(id)/claim", token: colleague)
        #expect(refused.status == 409)
        #expect(refused.header("Content-Type") == "application/problem+json")
        #expect(try refused.json()["type"] as? String == "/problems/already-assigned")
        #expect(try refused.json()["assigned_agent_id"] as? String == "agent-7")

        // Assign hands it over whoever holds it; the same assignment again writes nothing; null unassigns.
        let handed = try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.apiKey, body: #"{"agent_id":"agent-8"}"#)
        #expect(handed.status == 200)
        #expect(try handed.json()["assigned_agent_id"] as? String == "agent-8")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: colleague, body: #"{"agent_id":"agent-8"}"#).status == 200)
        let unassigned = try await app.call("POST", "/v1/interactions/\(id)/assign", token: colleague, body: #"{"agent_id":null}"#)
        #expect(unassigned.status == 200)
        #expect(try unassigned.json()["assigned_agent_id"] is NSNull)
        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: who.alice).json()["assigned_agent_id"] is NSNull)

        #expect(try await Self.assignmentPayloads(app) == [
            ["assigned_agent_id": "agent-7", "previous_agent_id": NSNull(), "by": "agent-7"],
            ["assigned_agent_id": "agent-8", "previous_agent_id": "agent-7", "by": "api"],
            ["assigned_agent_id": NSNull(), "previous_agent_id": "agent-8", "by": "agent-8"],
        ])
        await app.stop()
    }

    @Test func theInboxFilter() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let colleague = try await app.createSession(apiKey: who.apiKey, user: "agent-8", role: "agent")
        let mine = try await InteractionsEndToEndTests.start(app, who.alice, subject: "mine")
        let theirs = try await InteractionsEndToEndTests.start(app, who.alice, subject: "theirs")
        let open = try await InteractionsEndToEndTests.start(app, who.bob, subject: "open")
        #expect(try await app.call("POST", "/v1/interactions/\(mine)/claim", token: who.agent).status == 200)
        #expect(try await app.call("POST", "/v1/interactions/\(theirs)/claim", token: colleague).status == 200)

        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=me", token: who.agent)) == [mine])
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=me", token: colleague)) == [theirs])
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=none", token: who.agent)) == [open])
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=any", token: who.agent)) == [open, theirs, mine])
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions", token: who.agent)) == [open, theirs, mine])
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=none", token: who.alice)) == [])
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=none", token: who.bob)) == [open])
        // Paging keeps the filter.
        let first = try await app.call("GET", "/v1/interactions?assigned=any&limit=2", token: who.agent).json()
        let cursor = try #require(first["next_cursor"] as? String)
        #expect(try Self.ids(try await app.call("GET", "/v1/interactions?assigned=any&limit=2&cursor=\(cursor)", token: who.agent)) == [mine])

        for (query, token) in [("assigned=me", who.alice), ("assigned=someone", who.agent), ("assigned=", who.agent)] {
            let response = try await app.call("GET", "/v1/interactions?\(query)", token: token)
            #expect(response.status == 400, "\(query)")
            #expect(try response.json()["parameter"] as? String == "assigned")
        }
        await app.stop()
    }

    @Test func errorsAreProblems() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let other = try await InteractionsEndToEndTests.people(app, tenant: "Other")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)

        // Who may call: claim is for agents; assign for agents and the tenant's backend.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.alice).status == 403)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.apiKey).status == 401)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.alice, body: #"{"agent_id":"x"}"#).status == 403)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim").status == 401)
        // Another tenant's interaction, or none at all, is 404.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: other.agent).status == 404)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: other.apiKey, body: #"{"agent_id":"x"}"#).status == 404)
        #expect(try await app.call("POST", "/v1/interactions/\(UUID().uuidString)/claim", token: who.agent).status == 404)

        let long = String(repeating: "a", count: 201)
        for body in [#"{}"#, #"{"agent_id":""}"#, #"{"agent_id":"\#(long)"}"#, #"{"agent_id":7}"#, #"{"agent":"x"}"#,
                     #"{"agent_id":"a","agent_id":"b"}"#, "[]", "null"] {
            let response = try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.agent, body: body)
            #expect(response.status == 400, "\(body)")
            #expect(response.header("Content-Type") == "application/problem+json")
            // A misspelt field is named as what it is: a field this body does not take.
            let field = body == #"{"agent":"x"}"# ? "agent" : "agent_id"
            if body.hasPrefix("{\"agent") || body == "{}" { #expect(try response.json()["parameter"] as? String == field, "\(body)") }
        }
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.agent,
                                   headers: ["Content-Type": "text/plain"], body: #"{"agent_id":"x"}"#).status == 415)

        // An interaction that is over cannot change hands.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.alice).status == 200)
        let late = try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent)
        #expect(late.status == 409)
        #expect(try late.json()["state"] as? String == "ended")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.apiKey, body: #"{"agent_id":null}"#).status == 409)
        #expect(try await Self.assignmentPayloads(app).isEmpty)
        await app.stop()
    }

    /// Twenty agents claim one interaction at once, through two replicas: one wins, nineteen get 409, and the log and
    /// a live stream on the other replica hold exactly one `assignment` event.
    @Test func twentyAgentsClaimOneInteractionAtOnce() async throws {
        let app = try await TestApp.start()
        let replica = try await TestApp.start(database: app.database)
        let who = try await InteractionsEndToEndTests.people(app)
        var agents: [String] = []
        for n in 0 ..< 20 { agents.append(try await app.createSession(apiKey: who.apiKey, user: "agent-\(100 + n)", role: "agent")) }
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let stream = try await InteractionStreamTests.follow(replica, id, who.alice)
        _ = try await onThread { try stream.events(1) }

        let outcomes = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for (n, token) in agents.enumerated() {
                group.addTask {
                    let response = try await [app, replica][n % 2].call("POST", "/v1/interactions/\(id)/claim", token: token)
                    return (response.status, try response.json()["assigned_agent_id"] as? String)
                }
            }
            return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0.0 == 200 }.count == 1)
        #expect(outcomes.filter { $0.0 == 409 }.count == 19)
        let winner = try #require(outcomes.first { $0.0 == 200 }?.1)
        // Every refusal names the winner.
        #expect(outcomes.filter { $0.0 == 409 }.allSatisfy { $0.1 == winner })

        let logged = try await Self.assignmentPayloads(app)
        #expect(logged == [["assigned_agent_id": winner, "previous_agent_id": NSNull(), "by": winner]])
        // The live stream gets the one assignment, and nothing else before the marker message that follows it.
        #expect(try await ReadStateTests.post(app, id, who.alice, "marker") > 0)
        let live = try await onThread { try stream.events(2) }
        #expect(live.map(\.event) == ["assignment", "message"])
        #expect(stream.json(live[0])["assigned_agent_id"] as? String == winner)
        stream.socket.shutdownAndClose()
        await replica.stopKeepingDatabase()
        await app.stop()
    }
}
