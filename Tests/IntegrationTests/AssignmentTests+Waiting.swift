import Coordination
import Foundation
import Postgres
import Testing

extension AssignmentTests {
    /// What another writer leaves on the interaction's row while a claim waits for it.
    enum Holder: String, CaseIterable, Sendable {
        /// It ends the interaction: the claim is refused as over.
        case ends
        /// Another agent takes it: the claim is refused naming them.
        case takes
        /// The agent who held it lets it go: the claim takes it from nobody.
        case releases
    }

    /// A claim that waits for the interaction's row (held by a transaction that changes it) decides on the row as that
    /// transaction left it, not as the claim's statement first saw it: the right answer, the `assignment` event only
    /// when it took the interaction (naming the agent it took it from as the row then said), and an audit entry only
    /// when it succeeded.
    @Test(arguments: Holder.allCases)
    func aClaimThatWaitedForTheRowDecidesOnTheRowAsItWasLeft(holder: Holder) async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        if holder == .releases {
            #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.apiKey,
                                       body: #"{"agent_id":"agent-rival"}"#).status == 200)
        }
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let claiming = Locked<Task<RawResponse, any Error>?>(nil)
        try await pool.withTransaction { connection in
            let change = switch holder {
            case .ends: "state = 'ended', ended_at = now()"
            case .takes: "assigned_agent_id = 'agent-rival'"
            case .releases: "assigned_agent_id = NULL"
            }
            _ = try await connection.query("UPDATE interactions SET \(change) WHERE id = $1::uuid", [UUID(uuidString: id)])
            // The claim's statement starts while the row is held, so its snapshot has the row as it was before.
            claiming.withLock { $0 = Task { try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent) } }
            #expect(await app.someStatementWaitsForALock(like: "%ended_at, assigned_agent_id,%FOR UPDATE%"))
        }
        let response = try await #require(claiming.withLock { $0 }).value
        let json = try response.json()
        let logged = try await Self.assignmentPayloads(app)
        let audited = try await app.database.query("""
            SELECT count(*) AS n FROM audit_events WHERE action = 'interaction.claimed'
            """)[0].decode("n", as: Int64.self)
        switch holder {
        case .ends:
            #expect(response.status == 409 && json["state"] as? String == "ended", "\(json)")
            #expect(logged.isEmpty && audited == 0)
        case .takes:
            #expect(response.status == 409 && json["assigned_agent_id"] as? String == "agent-rival", "\(json)")
            #expect(logged.isEmpty && audited == 0)
        case .releases:
            #expect(response.status == 200 && json["assigned_agent_id"] as? String == "agent-7", "\(json)")
            #expect(logged.last == ["assigned_agent_id": "agent-7", "previous_agent_id": NSNull(), "by": "agent-7"])
            #expect(logged.count == 2 && audited == 1)
        }
        await pool.close()
        await app.stop()
    }
}
