import Foundation
import Postgres
import TestSupport
import Testing

/// Automatic assignment: the setting, the round-robin rule (fewest open, then longest since the last one), the cap,
/// the queue of waiting interactions, agents in their grace, and — across two replicas creating interactions at once
/// while agents come and go — each interaction assigned at most once and nobody above the cap, checked in Postgres.
@Suite("Automatic assignment", .timeLimit(.minutes(10)))
struct AutoAssignmentTests {
    static func settings(_ app: TestApp, _ apiKey: String, _ body: String) async throws -> RawResponse {
        try await app.call("PATCH", "/v1/settings", token: apiKey, body: body)
    }

    static func assignee(_ app: TestApp, _ token: String, _ id: String) async throws -> String? {
        try await app.call("GET", "/v1/interactions/\(id)", token: token).json()["assigned_agent_id"] as? String
    }

    @Test func roundRobinWithinTheCapAndTheQueue() async throws {
        let app = try await TestApp.start(presenceGrace: .seconds(30))
        let who = try await InteractionsEndToEndTests.people(app)
        let colleague = try await app.createSession(apiKey: who.apiKey, user: "agent-8", role: "agent")
        #expect(try await app.call("GET", "/v1/settings", token: who.apiKey).json()["auto_assign"] as? String == "off")
        for body in [#"{"auto_assign":"fifo"}"#, #"{"max_open_per_agent":0}"#, #"{"max_open_per_agent":"2"}"#, #"{"x":1}"#] {
            #expect(try await Self.settings(app, who.apiKey, body).status == 400, "\(body)")
        }
        #expect(try await app.call("PATCH", "/v1/settings", token: who.agent, body: "{}").status == 401)
        let set = try await Self.settings(app, who.apiKey, #"{"auto_assign":"round_robin","max_open_per_agent":2}"#)
        #expect(try set.json()["auto_assign"] as? String == "round_robin" && set.json()["max_open_per_agent"] as? Int == 2)

        // Nobody online: the interaction waits.
        let first = try await InteractionsEndToEndTests.start(app, who.alice, subject: "1")
        #expect(try await Self.assignee(app, who.agent, first) == nil)
        // agent-7 comes online: the waiting one goes to it.
        let mine = try await onThread { try InboxStreamTests.open(app, who.agent) }
        #expect(await eventually(timeout: .seconds(10)) { (try? await Self.assignee(app, who.agent, first)) == "agent-7" })
        // agent-8 too: the next goes to the one with fewer open (agent-8), then a tie goes to the one given one
        // longest ago (agent-7), then agent-8, then nobody has room: it waits.
        let theirs = try await onThread { try InboxStreamTests.open(app, colleague) }
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await app.call("GET", "/v1/agents", token: who.apiKey).json()["items"] as? [[String: Any]])??
                .filter { $0["status"] as? String == "online" }.count == 2
        })
        // Each is assigned as it is created — or, if an agent's row was locked that instant (`SKIP LOCKED`), by the
        // next drain within a second, under the same rule: waiting for that gives the same order.
        var assigned: [String?] = []
        for n in 2 ... 5 {
            let id = try await InteractionsEndToEndTests.start(app, n.isMultiple(of: 2) ? who.bob : who.alice, subject: "\(n)")
            var agent: String?
            _ = await eventually(timeout: .seconds(3)) {
                agent = try? await app.call("GET", "/v1/interactions/\(id)", token: who.agent).json()["assigned_agent_id"] as? String
                return agent != nil
            }
            assigned.append(agent)
        }
        #expect(assigned == ["agent-8", "agent-7", "agent-8", nil])
        // A person may go past the cap.
        let extra = try await InteractionsEndToEndTests.start(app, who.bob, subject: "extra")
        #expect(try await app.call("POST", "/v1/interactions/\(extra)/claim", token: who.agent).status == 200)
        // agent-8 ends one: below the cap again, it takes the waiting one.
        let agents = try await app.call("GET", "/v1/agents", token: who.apiKey).json()["items"] as? [[String: Any]]
        #expect(agents?.map { $0["open_interactions"] as? Int } == [3, 2])
        let rows = try await app.database.query("""
            SELECT id::text AS id FROM interactions WHERE assigned_agent_id = 'agent-8' ORDER BY created_at LIMIT 1
            """)
        let done = try rows[0].decode("id", as: String.self)
        #expect(try await app.call("POST", "/v1/interactions/\(done)/end", token: colleague).status == 200)
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await app.database.query("""
                SELECT count(*) AS n FROM interactions WHERE state = 'started' AND assigned_agent_id IS NULL
                """))?.first.flatMap { try? $0.decode("n", as: Int64.self) } == 0
        })
        // In its grace an agent gets nothing new; and automatic assignments are logged with `by` null.
        theirs.socket.shutdownAndClose()
        #expect(try await Self.settings(app, who.apiKey, #"{"max_open_per_agent":10}"#).status == 200)
        // Its lease ended when the stream did (the grace runs on): nothing new is given to it.
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await app.database.query("""
                SELECT bool_and(connected_until <= now()) AS over FROM agent_connections WHERE agent_id = 'agent-8'
                """))?.first.flatMap { try? $0.decode("over", as: Bool.self) } == true
        })
        // Assigned as it is opened: the answer already names the agent, and the log holds the start, then the assignment.
        let opened = try await app.call("POST", "/v1/interactions", token: who.alice, body: #"{"subject":"later"}"#)
        #expect(opened.status == 201)
        #expect(try opened.json()["assigned_agent_id"] as? String == "agent-7")
        let later = try #require(try opened.json()["id"] as? String)
        #expect(try await Self.assignee(app, who.agent, later) == "agent-7")
        let logged = try await app.database.query("""
            SELECT e.seq, e.kind, payload->>'by' AS by FROM interaction_events e WHERE e.interaction_id = $1::uuid ORDER BY e.seq
            """, [UUID(uuidString: later)])
        #expect(try logged.map { try $0.decode("kind", as: String.self) } == ["state", "assignment"])
        #expect(try logged.map { try $0.decode("seq", as: Int64.self) } == [1, 2])
        #expect(try logged[1].decode("by", as: String?.self) == nil)
        // Every automatic assignment has its audit entry, by the system, naming its interaction; no other has one.
        let automatic = try await app.database.query("""
            SELECT e.interaction_id::text AS id FROM interaction_events e
            WHERE e.kind = 'assignment' AND e.payload->>'by' IS NULL ORDER BY 1
            """).map { try $0.decode("id", as: String.self) }
        let audited = try await app.database.query("""
            SELECT target_id AS id FROM audit_events
            WHERE action = 'interaction.assigned' AND actor_kind = 'system' AND actor_id = 'automatic assignment' ORDER BY 1
            """).map { try $0.decode("id", as: String.self) }
        #expect(!automatic.isEmpty && audited == automatic)
        mine.socket.shutdownAndClose()
        await app.stop()
    }

    /// Two replicas create 200 interactions at once while agents come and go, for room for 150 (5 agents, a cap of
    /// 30); then, in Postgres: each interaction assigned automatically at most once, exactly 150 assigned in the end
    /// (every agent full: the queue drained into all the room there was), nobody above the cap (nothing ends here, so
    /// counts only grow: above it at the end is the only way to have been above it), and the kept counts equal the
    /// true ones.
    @Test(arguments: [5, 9] as [UInt64])
    func concurrentCreationsAcrossReplicas(seed: UInt64) async throws {
        let database = try await TestDatabase.create()
        let first = try await TestApp.start(database: database, presenceGrace: .seconds(1))
        let second = try await TestApp.start(database: database, presenceGrace: .seconds(1))
        let apps = [first, second]
        let tenant = try await first.createTenant("Busy")
        let cap = 30
        #expect(try await Self.settings(first, tenant.apiKey, #"{"auto_assign":"round_robin","max_open_per_agent":\#(cap)}"#).status == 200)
        var agentTokens: [String] = []
        for n in 0 ..< 5 { agentTokens.append(try await first.createSession(apiKey: tenant.apiKey, user: "agent-\(n)", role: "agent")) }
        var customerTokens: [String] = []
        for n in 0 ..< 20 { customerTokens.append(try await second.createSession(apiKey: tenant.apiKey, user: "c-\(n)", role: "customer")) }
        let agents = agentTokens, customers = customerTokens
        // Agents 2, 3 and 4 stay; agents 0 and 1 come and go (their only stream opened and closed).
        var streams: [EventStreamClient] = []
        for (n, agent) in agents.enumerated().dropFirst(2) {
            let app = apps[n % 2]
            streams.append(try await onThread { try InboxStreamTests.open(app, agent) })
        }
        #expect(await eventually(timeout: .seconds(10)) {
            (try? await first.call("GET", "/v1/agents", token: tenant.apiKey).json()["items"] as? [[String: Any]])??
                .filter { $0["status"] as? String == "online" }.count == 3
        })

        // Two agents come and go while the interactions are created.
        let churn = Task {
            var rng = SplitMix64(seed: seed)
            var open: [Int: EventStreamClient] = [:]
            for round in 0 ..< 12 {
                let n = Int(rng.next() % 2)
                if let stream = open.removeValue(forKey: n) {
                    stream.socket.shutdownAndClose()
                } else {
                    let app = apps[round % 2], token = agents[n]
                    open[n] = try? await onThread { try InboxStreamTests.open(app, token) }
                }
                try? await Task.sleep(for: .milliseconds(150))
            }
            // Both back for good, so that the room there is can be filled.
            for n in 0 ..< 2 where open[n] == nil {
                let app = apps[n], token = agents[n]
                open[n] = try? await onThread { try InboxStreamTests.open(app, token) }
            }
            return Array(open.values)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0 ..< 20 {
                group.addTask {
                    for n in 0 ..< 10 {
                        let app = apps[(worker + n) % 2]
                        let response = try await app.call("POST", "/v1/interactions", token: customers[worker],
                                                          body: #"{"subject":"w\#(worker) n\#(n)"}"#)
                        #expect(response.status == 201)
                    }
                }
            }
            try await group.waitForAll()
        }
        let churned = await churn.value
        // Everyone back online: the queue drains into the room there is.
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await database.query("SELECT count(*) AS n FROM interactions WHERE assigned_agent_id IS NOT NULL"))?
                .first.flatMap { try? $0.decode("n", as: Int64.self) } == Int64(5 * cap)
        })
        try await Task.sleep(for: .seconds(2))
        let events = try await database.query("""
            SELECT e.interaction_id::text AS id, e.payload->>'assigned_agent_id' AS agent, e.payload->>'by' AS by
            FROM interaction_events e WHERE e.kind = 'assignment' ORDER BY e.created_at, e.interaction_id
            """)
        var perInteraction: [String: Int] = [:]
        for row in events {
            perInteraction[try row.decode("id", as: String.self), default: 0] += 1
            #expect(try row.decode("by", as: String?.self) == nil)
        }
        #expect(perInteraction.count == 5 * cap)
        #expect(perInteraction.values.allSatisfy { $0 == 1 }, "an interaction assigned more than once")
        let counts = try await database.query("""
            SELECT p.agent_id, p.open_count,
                   (SELECT count(*) FROM interactions i WHERE i.tenant_id = p.tenant_id AND i.assigned_agent_id = p.agent_id
                    AND i.state = 'started') AS actual
            FROM agent_presence p ORDER BY 1
            """)
        for row in counts {
            let agent: String = try row.decode("agent_id")
            let kept: Int32 = try row.decode("open_count")
            let actual: Int64 = try row.decode("actual")
            #expect(Int64(kept) == actual, "\(agent): kept \(kept), actual \(actual)")
            #expect(actual == Int64(cap), "\(agent) holds \(actual), the cap is \(cap)")
        }
        for stream in streams + churned { stream.socket.shutdownAndClose() }
        await first.stopKeepingDatabase()
        await second.stop()
    }
}
