import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Presence: an agent is what it chose while it holds an inbox stream on some replica, stays so for the grace after
/// its last stream ends (a reconnect does not flap), and is offline after — also when the replica holding its
/// stream is killed.
@Suite("Presence", .timeLimit(.minutes(10)))
struct PresenceTests {
    static func status(_ app: TestApp, _ token: String, of agent: String) async throws -> String? {
        let items = try await app.call("GET", "/v1/agents", token: token).json()["items"] as? [[String: Any]]
        return items?.first { $0["agent_id"] as? String == agent }?["status"] as? String
    }

    /// The statuses `agent` is announced with on `stream`, up to `last`.
    static func statuses(_ stream: EventStreamClient, of agent: String, until last: String) async throws -> [String] {
        try await onThread {
            var seen: [String] = []
            while seen.last != last {
                for event in try stream.events(1, timeout: 10) where event.event == "agent.status" {
                    let data = stream.json(event)
                    if data["agent_id"] as? String == agent, let status = data["status"] as? String { seen.append(status) }
                }
            }
            return seen
        }
    }

    @Test func statusFollowsStreamsChoicesAndTheGrace() async throws {
        // A grace that a busy machine's reconnect (a new stream: its head, authentication, registration) fits in.
        let app = try await TestApp.start(presenceGrace: .seconds(6))
        let who = try await InteractionsEndToEndTests.people(app)
        let colleague = try await app.createSession(apiKey: who.apiKey, user: "agent-8", role: "agent")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        #expect(try await Self.status(app, who.apiKey, of: "agent-7") == nil)
        #expect(try await app.call("GET", "/v1/support/status", token: who.alice).json()["agents_online"] as? Int == 0)

        // A colleague watches the inbox: it hears agent-7's changes.
        let watching = try await onThread { try InboxStreamTests.open(app, colleague) }
        _ = try await onThread { try watching.events(2) }
        let stream = try await onThread { try InboxStreamTests.open(app, who.agent) }
        #expect(await eventually { (try? await Self.status(app, who.apiKey, of: "agent-7")) == "online" })
        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: who.alice).json()["agents_online"] as? Int == 2)
        #expect(try await app.call("GET", "/v1/interactions/\(id)", token: who.agent).json()["agents_online"] == nil)

        let away = try await app.call("POST", "/v1/agents/me/status", token: who.agent, body: #"{"status":"away"}"#)
        #expect(away.status == 200)
        #expect(try away.json()["status"] as? String == "away")
        #expect(try await app.call("GET", "/v1/support/status", token: who.bob).json()["agents_online"] as? Int == 1)
        // The colleague hears agent-7's changes in order (an unread one may give way to the next: the latest wins).
        let heard = try await Self.statuses(watching, of: "agent-7", until: "away")
        #expect(heard == ["online", "away"] || heard == ["away"], "\(heard)")
        #expect(try await app.call("POST", "/v1/agents/me/status", token: who.agent, body: #"{"status":"online"}"#)
            .json()["status"] as? String == "online")

        // A reconnect within the grace never shows offline.
        stream.socket.shutdownAndClose()
        let reconnected = try await onThread { try InboxStreamTests.open(app, who.agent) }
        for _ in 0 ..< 70 {
            #expect(try await Self.status(app, who.apiKey, of: "agent-7") == "online")
            try await Task.sleep(for: .milliseconds(100))
        }
        // Gone for longer than the grace: offline, and the colleague hears it.
        reconnected.socket.shutdownAndClose()
        let closedAt = Date()
        #expect(await eventually(timeout: .seconds(30)) { (try? await Self.status(app, who.apiKey, of: "agent-7")) == "offline" })
        #expect(Date().timeIntervalSince(closedAt) >= 5.9)
        let later = try await Self.statuses(watching, of: "agent-7", until: "offline")
        #expect(later == ["online", "offline"] || later == ["offline"], "\(later)")

        for body in [#"{"status":"offline"}"#, #"{"status":"busy"}"#, #"{}"#, #"{"status":1}"#] {
            let refused = try await app.call("POST", "/v1/agents/me/status", token: who.agent, body: body)
            #expect(refused.status == 400, "\(body)")
        }
        #expect(try await app.call("POST", "/v1/agents/me/status", token: who.alice, body: #"{"status":"away"}"#).status == 403)
        #expect(try await app.call("GET", "/v1/agents", token: who.alice).status == 403)
        let list = try await app.call("GET", "/v1/agents", token: who.agent).json()["items"] as? [[String: Any]]
        #expect(list?.map { $0["agent_id"] as? String } == ["agent-7", "agent-8"])
        await app.stop()
    }

    /// The replica holding an agent's only inbox stream is killed: the other replica shows the agent offline once the
    /// dead replica's lease (4 s from its last renewal, which came before the kill) and the grace (3 s here) have
    /// passed, at the survivor's next sweep (every second): at most 8 s after the kill, and the time this test takes to
    /// see it (a request to the survivor, on a machine that may be busy) on top.
    @Test func aKilledReplicasAgentsGoOfflineAfterTheGrace() async throws {
        let database = try await TestDatabase.create()
        let settings = ["DATABASE_URL": database.url, "SWITCHBOARD_ADMIN_TOKEN": TestApp.adminToken,
                        "RATE_LIMIT_PER_MINUTE": "0", "STREAM_PORT": "off", "PRESENCE_GRACE_SECONDS": "3"]
        let doomed = try await SignalTests.launch(extra: settings)
        let survivor = try await SignalTests.launch(extra: settings)
        for replica in [doomed, survivor] {
            #expect(await eventually(timeout: .seconds(20)) { (try? await request(port: replica.port, "GET", "/readyz").status) == 200 })
        }
        let tenant = try await request(port: survivor.port, "POST", "/v1/admin/tenants",
                                       headers: ["Authorization": "Bearer \(TestApp.adminToken)"], body: #"{"name":"P"}"#)
        let apiKey = try #require(try tenant.json()["api_key"] as? String)
        let session = try await request(port: survivor.port, "POST", "/v1/sessions", headers: ["Authorization": "Bearer \(apiKey)"],
                                        body: #"{"user_id":"agent-1","role":"agent"}"#)
        let agent = try #require(try session.json()["token"] as? String)
        func status() async -> String? {
            let response = try? await request(port: survivor.port, "GET", "/v1/agents", headers: ["Authorization": "Bearer \(apiKey)"])
            return (try? response?.json()["items"] as? [[String: Any]])??.first?["status"] as? String
        }
        let stream = try await onThread {
            try EventStreamClient(port: doomed.port, path: "/v1/inbox/events", token: agent)
        }
        #expect(stream.status == 200)
        #expect(await eventually(timeout: .seconds(10)) { await status() == "online" })

        doomed.child.signal(SIGKILL)
        let killedAt = Date()
        _ = try await onThread { doomed.child.wait() }
        #expect(await eventually(timeout: .seconds(20)) { await status() == "offline" })
        let took = Date().timeIntervalSince(killedAt)
        #expect(took <= 3 + 4 + 1 + 2, "offline \(took) s after the kill (the grace, the lease, a sweep's tick, 2 s to see it)")
        #expect(took >= 2.5, "offline \(took) s after the kill, before the grace")
        stream.socket.shutdownAndClose()
        try await database.stop([survivor])
    }
}
