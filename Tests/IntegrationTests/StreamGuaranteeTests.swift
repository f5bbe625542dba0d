import Foundation
import Testing
import TestSupport

/// What one client does to its own stream never changes what another receives; streams end with their
/// credentials; ids reveal nothing of other tenants. Each test here failed before these guarantees were built.
@Suite("Event streams: per-stream resume, credentials, caps", .timeLimit(.minutes(10)))
struct StreamGuaranteeTests {
    typealias People = InteractionsEndToEndTests.People
    static let follow = InteractionStreamTests.follow

    static func events(_ app: TestApp, _ id: String, _ token: String, lastEventID: String) async throws -> RawResponse {
        try await app.call("GET", "/v1/interactions/\(id)/events", token: token, headers: ["Last-Event-ID": lastEventID])
    }

    @Test func aLastEventIDBeyondTheLogIsRefusedAndSilencesNobody() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let agent = try await Self.follow(app, id, who.agent, nil)
        _ = try await onThread { try agent.events(1) }
        // The customer claims ids the log never reached: each is refused, and changes nothing for the agent.
        for claimed in ["9223372036854775807", "42", "2"] {
            let refused = try await Self.events(app, id, who.alice, lastEventID: claimed)
            #expect(refused.status == 400)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(try refused.json()["type"] as? String == "/problems/unknown-event-id")
            #expect(try refused.json()["last_event_id"] as? String == "1")
        }
        let query = try await app.call("GET", "/v1/interactions/\(id)/events?last_event_id=9223372036854775807", token: who.alice)
        #expect(query.status == 400)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"hi"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.alice).status == 200)
        let rest = try await onThread { try agent.eventsUntilEnd() }
        #expect(rest.map(\.event) == ["message", "state"])
        #expect(rest.map(\.id) == ["2", "3"])
        #expect(agent.ended)
        await app.stop()
    }

    @Test(arguments: ["end", "fail"])
    func resumingAnInteractionThatIsOverFromItsFinalEventIs204(_ action: String) async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"hi"}"#).status == 201)
        let body = action == "fail" ? #"{"reason":"line dropped"}"# : nil
        #expect(try await app.call("POST", "/v1/interactions/\(id)/\(action)", token: who.agent, body: body).status == 200)
        for lastEventID in ["3", "4", "9223372036854775807"] {
            let resumed = try await Self.events(app, id, who.alice, lastEventID: lastEventID)
            #expect(resumed.status == 204, "Last-Event-ID \(lastEventID)")
            #expect(resumed.body.isEmpty)
        }
        // Before the final event, the rest is replayed and the stream ends.
        let replay = try await Self.follow(app, id, who.alice, "2")
        let rest = try await onThread { try replay.eventsUntilEnd() }
        #expect(rest.map(\.id) == ["3"])
        #expect(replay.ended)
        await app.stop()
    }

    @Test func eventIDsCountWithinEachInteractionAndRevealNoOtherTenant() async throws {
        let app = try await TestApp.start()
        let first = try await InteractionsEndToEndTests.people(app, tenant: "A")
        let second = try await InteractionsEndToEndTests.people(app, tenant: "B")
        let a = try await InteractionsEndToEndTests.start(app, first.alice)
        let b = try await InteractionsEndToEndTests.start(app, second.alice)
        var seqs: [String: [Int]] = [a: [], b: []]
        for n in 0 ..< 6 {
            let (id, token) = n.isMultiple(of: 2) ? (a, first.alice) : (b, second.alice)
            let posted = try await app.call("POST", "/v1/interactions/\(id)/messages", token: token, body: #"{"text":"m\#(n)"}"#)
            seqs[id]?.append(try posted.json()["seq"] as? Int ?? -1)
        }
        #expect(seqs[a] == [2, 3, 4])
        #expect(seqs[b] == [2, 3, 4])
        let stream = try await Self.follow(app, b, second.alice, "0")
        let events = try await onThread { try stream.events(4) }
        #expect(events.map(\.id) == ["1", "2", "3", "4"])
        await app.stop()
    }

    @Test func revokingASessionEndsItsStreamsOnEveryReplicaAndOnlyThose() async throws {
        let app = try await TestApp.start()
        let other = try await TestApp.start(database: app.database)
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let here = try await Self.follow(app, id, who.alice, nil)
        let there = try await Self.follow(other, id, who.alice, nil)
        let agent = try await Self.follow(other, id, who.agent, nil)
        _ = try await onThread { (try here.events(1), try there.events(1), try agent.events(1)) }
        #expect(try await app.call("DELETE", "/v1/sessions/current", token: who.alice).status == 204)
        let started = ContinuousClock.now
        for stream in [here, there] {
            let tail = try await onThread { try stream.eventsUntilEnd(timeout: 5) }
            #expect(tail.map(\.event) == ["reconnect"])
            #expect(tail.first.map { stream.json($0)["reason"] as? String } == "session_revoked")
            #expect(stream.ended)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        // The agent's stream of the same interaction goes on.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"still here"}"#).status == 201)
        let next = try await onThread { try agent.events(1) }
        #expect(next.map(\.event) == ["message"])
        // The revoked token cannot open a new stream — not even on the replica that had it cached a moment ago.
        #expect(try await Self.events(app, id, who.alice, lastEventID: "0").status == 401)
        #expect(try await Self.events(other, id, who.alice, lastEventID: "0").status == 401)
        #expect(try await other.call("GET", "/v1/sessions/current", token: who.alice).status == 401)
        await other.stopKeepingDatabase()
        await app.stop()
    }

    @Test func anExpiredSessionsStreamEndsAtItsExpiry() async throws {
        let app = try await TestApp.start()
        let created = try await app.createTenant()
        let shortLived = try await app.createSession(apiKey: created.apiKey, user: "carol", role: "customer")
        // Sessions live a minute at least; this one is made to expire in six seconds, before its first use.
        _ = try await app.database.query("UPDATE sessions SET expires_at = now() + interval '6 seconds' WHERE user_id = 'carol'")
        let opened = ContinuousClock.now
        let id = try await InteractionsEndToEndTests.start(app, shortLived)
        let stream = try await Self.follow(app, id, shortLived, nil)
        #expect(stream.status == 200)
        _ = try await onThread { try stream.events(1) }
        let tail = try await onThread { try stream.eventsUntilEnd(timeout: 12) }
        #expect(tail.map(\.event) == ["reconnect"])
        #expect(tail.first.map { stream.json($0)["reason"] as? String } == "session_expired")
        #expect(ContinuousClock.now - opened < .seconds(9), "ended within the sweep's second of the expiry")
        await app.stop()
    }

    @Test func aUserOverTheStreamCapGets429UntilOneCloses() async throws {
        let app = try await TestApp.start(streamsPerPrincipal: 2)
        let who = try await InteractionsEndToEndTests.people(app)
        // Two sessions of the same user count together; another user is not affected.
        let secondDevice = try await app.createSession(apiKey: who.apiKey, user: "alice", role: "customer")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let one = try await Self.follow(app, id, who.alice, nil)
        let two = try await Self.follow(app, id, secondDevice, nil)
        #expect(one.status == 200 && two.status == 200)
        let refused = try await app.call("GET", "/v1/interactions/\(id)/events", token: who.alice)
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") == "5")
        #expect(refused.header("Content-Type") == "application/problem+json")
        let agent = try await Self.follow(app, id, who.agent, nil)
        #expect(agent.status == 200)
        one.socket.shutdownAndClose()
        #expect(await eventually(timeout: .seconds(5)) { app.app.liveSubscribers == 2 })
        let again = try await Self.follow(app, id, who.alice, nil)
        #expect(again.status == 200)
        await app.stop()
    }

    @Test func anIdempotentRetryWithARefreshedTokenStoresOneMessage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let refreshed = try await app.createSession(apiKey: who.apiKey, user: "alice", role: "customer")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let headers = ["Idempotency-Key": "retry-7"]
        let first = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, headers: headers, body: #"{"text":"once"}"#)
        let retry = try await app.call("POST", "/v1/interactions/\(id)/messages", token: refreshed, headers: headers, body: #"{"text":"once"}"#)
        #expect(first.status == 201 && retry.status == 201)
        #expect(first.body == retry.body)
        let stored = try await app.database.query("SELECT count(*) AS n FROM interaction_events WHERE kind = 'message'")
        #expect(try stored[0].decode("n", as: Int64.self) == 1)
        // Another user with the same key is another request.
        let other = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, headers: headers, body: #"{"text":"once"}"#)
        #expect(other.status == 201 && other.body != first.body)
        await app.stop()
    }
}
