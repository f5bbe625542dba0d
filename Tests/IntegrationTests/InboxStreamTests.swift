import Foundation
import Interactions
import Postgres
import TestSupport
import Testing

/// `GET /v1/inbox/events` end to end: the snapshot, live changes with the watcher's own unread count, what leaves the
/// view, other tenants, resumption across replicas — including past a transaction that commits after a
/// later-numbered one — and every refusal.
@Suite("Inbox stream", .timeLimit(.minutes(10)))
struct InboxStreamTests {
    /// Opens an inbox stream (blocking; from `onThread`).
    static func open(_ app: TestApp, _ token: String, query: String = "", lastEventID: String? = nil) throws -> EventStreamClient {
        try EventStreamClient(port: app.port, path: "/v1/inbox/events\(query)", token: token, lastEventID: lastEventID)
    }

    /// The next `count` events that are not agents' statuses (presence announces the watchers themselves).
    static func next(_ stream: EventStreamClient, _ count: Int) async throws -> [ReceivedEvent] {
        try await onThread {
            var events: [ReceivedEvent] = []
            while events.count < count {
                let more = try stream.events(1)
                if more.isEmpty { break }
                events += more.filter { $0.event != "agent.status" }
            }
            return events
        }
    }

    /// The next `count` `interaction` events (heartbeats are comments; agents' statuses are skipped).
    static func interactions(_ stream: EventStreamClient, _ count: Int) async throws -> [[String: Any]] {
        let events = try await next(stream, count)
        #expect(events.count == count)
        for event in events { #expect(event.event == "interaction") }
        return events.map { stream.json($0) }
    }

    @Test func snapshotThenLiveChangesAsTheWatcherSeesThem() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let older = try await InteractionsEndToEndTests.start(app, who.alice, subject: "older")
        let newer = try await InteractionsEndToEndTests.start(app, who.bob, subject: "newer")
        let stranger = try await InteractionsEndToEndTests.people(app, tenant: "Other")
        _ = try await InteractionsEndToEndTests.start(app, stranger.alice, subject: "not yours")

        let stream = try await onThread { try Self.open(app, who.agent) }
        #expect(stream.status == 200)
        let opening = try await Self.next(stream, 3)
        #expect(opening.map(\.event) == ["interaction", "interaction", "snapshot-end"])
        #expect(opening.map { stream.json($0)["id"] as? String } == [newer, older, nil])
        #expect(opening[0].id == nil && opening[1].id == nil)
        #expect(stream.json(opening[2])["count"] as? Int == 2)
        let first = try #require(opening[2].id)
        #expect(stream.retry == 2000)

        // The snapshot shows each interaction exactly as GET does for the agent, plus its preview and in_view.
        let shown = try await app.call("GET", "/v1/interactions/\(newer)", token: who.agent).json()
        let snapshotted = stream.json(opening[0])
        for (key, value) in shown { #expect(snapshotted[key] as? NSObject == value as? NSObject, "\(key)") }
        #expect(snapshotted["in_view"] as? Bool == true)
        #expect(snapshotted["last_message"] is NSNull)

        // Another tenant's change never shows; the next event is this tenant's.
        _ = try await InteractionsEndToEndTests.start(app, stranger.bob, subject: "still not yours")
        let posted = try await app.call("POST", "/v1/interactions/\(older)/messages", token: who.alice,
                                        body: #"{"text":"\#(String(repeating: "é", count: 250))"}"#)
        #expect(posted.status == 201)
        let message = try await Self.interactions(stream, 1)[0]
        #expect(message["id"] as? String == older)
        #expect(message["unread_count"] as? Int == 1)
        let preview = try #require(message["last_message"] as? [String: Any])
        #expect(preview["kind"] as? String == "message")
        #expect(preview["sender_role"] as? String == "customer")
        #expect((preview["text"] as? String)?.count == 200)
        #expect(preview["id"] as? String == (try posted.json()["id"] as? String))
        #expect(preview["created_at"] as? String == (try posted.json()["created_at"] as? String))

        // The agent reads: their own count drops to 0.
        let seq = try #require(try posted.json()["seq"] as? Int)
        #expect(try await app.call("POST", "/v1/interactions/\(older)/read", token: who.agent,
                                   body: #"{"event_id":\#(seq)}"#).status == 200)
        let read = try await Self.interactions(stream, 1)[0]
        #expect(read["id"] as? String == older && read["unread_count"] as? Int == 0)

        // Ending it takes it out of the default view (started only): one last event with in_view false.
        #expect(try await app.call("POST", "/v1/interactions/\(newer)/end", token: who.bob).status == 200)
        let ended = try await Self.interactions(stream, 1)[0]
        #expect(ended["id"] as? String == newer && ended["in_view"] as? Bool == false && ended["state"] as? String == "ended")
        // A read on the ended one is a change, but it stays out of view, and this stream told its client already.
        #expect(try await app.call("POST", "/v1/interactions/\(newer)/read", token: who.agent, body: #"{"event_id":1}"#).status == 200)
        _ = try await app.call("POST", "/v1/interactions/\(older)/messages", token: who.agent, body: #"{"text":"hi"}"#)
        let reply = try await Self.interactions(stream, 1)[0]
        #expect(reply["id"] as? String == older)
        #expect((reply["last_message"] as? [String: Any])?["sender_role"] as? String == "agent")

        // Resuming from the snapshot's end: every interaction changed since, once, oldest change first.
        stream.socket.shutdownAndClose()
        let resumed = try await onThread { try Self.open(app, who.agent, lastEventID: first) }
        let replay = try await Self.next(resumed, 2)
        #expect(replay.map { resumed.json($0)["id"] as? String } == [newer, older])
        #expect(replay.map { resumed.json($0)["in_view"] as? Bool } == [false, true])
        #expect(replay.allSatisfy { $0.id != nil })
        await app.stop()
    }

    @Test func whatLeavesAFilterIsRemovedOnce() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let colleague = try await app.createSession(apiKey: who.apiKey, user: "agent-8", role: "agent")
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let unassigned = try await onThread { try Self.open(app, who.agent, query: "?assigned=none") }
        let mine = try await onThread { try Self.open(app, who.agent, query: "?assigned=me&state=started,ended") }
        #expect(try await Self.next(unassigned, 2).map(\.event) == ["interaction", "snapshot-end"])
        #expect(try await Self.next(mine, 1).map(\.event) == ["snapshot-end"])

        #expect(try await app.call("POST", "/v1/interactions/\(id)/claim", token: colleague).status == 200)
        let gone = try await Self.interactions(unassigned, 1)[0]
        #expect(gone["in_view"] as? Bool == false && gone["assigned_agent_id"] as? String == "agent-8")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: colleague, body: #"{"agent_id":"agent-7"}"#).status == 200)
        let arrived = try await Self.interactions(mine, 1)[0]
        #expect(arrived["in_view"] as? Bool == true && arrived["assigned_agent_id"] as? String == "agent-7")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent).status == 200)
        #expect(try await Self.interactions(mine, 1)[0]["state"] as? String == "ended")
        await app.stop()
    }

    /// A change whose transaction takes its number first and commits last is not skipped by a client that resumed
    /// in between, on another replica.
    @Test func aLateCommitReachesAClientThatResumedMeanwhile() async throws {
        let database = try await TestDatabase.create()
        let first = try await TestApp.start(database: database)
        let second = try await TestApp.start(database: database)
        let who = try await InteractionsEndToEndTests.people(first)
        let held = try await InteractionsEndToEndTests.start(first, who.alice, subject: "held")
        let quick = try await InteractionsEndToEndTests.start(first, who.bob, subject: "quick")
        let stream = try await onThread { try Self.open(first, who.agent) }
        _ = try await Self.next(stream, 3)

        // A writer takes the next change number for `held` and keeps its transaction open.
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 1)
        let (opened, open) = AsyncStream.makeStream(of: Void.self)
        let (release, released) = AsyncStream.makeStream(of: Void.self)
        let writer = Task {
            try await pool.withTransaction { connection in
                _ = try await connection.query("UPDATE interactions SET subject = 'committed late' WHERE id = $1::uuid", [held])
                _ = try await connection.query("""
                    INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, id FROM interactions WHERE id = $1::uuid
                    """, [held])
                _ = try await connection.query("SELECT pg_notify('switchboard_interactions', $1)", ["\(held):1"])
                open.yield()
                for await _ in release { break }
            }
        }
        for await _ in opened { break }
        // A later-numbered change commits first; the client gets it, is cut off, and resumes on the other replica.
        #expect(try await first.call("POST", "/v1/interactions/\(quick)/messages", token: who.bob, body: #"{"text":"x"}"#).status == 201)
        let seen = try await Self.next(stream, 1)
        #expect(stream.json(seen[0])["id"] as? String == quick)
        stream.socket.shutdownAndClose()
        let resumed = try await onThread { try Self.open(second, who.agent, lastEventID: seen[0].id) }
        #expect(resumed.status == 200)
        released.yield()
        try await writer.value
        let late = try await Self.interactions(resumed, 1)[0]
        #expect(late["id"] as? String == held && late["subject"] as? String == "committed late")
        await pool.close()
        await first.stopKeepingDatabase()
        await second.stop()
    }

    @Test func refusals() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let stranger = try await InteractionsEndToEndTests.people(app, tenant: "Other")
        let customer = try await app.call("GET", "/v1/inbox/events", token: who.alice)
        #expect(customer.status == 403)
        #expect(try await app.call("GET", "/v1/inbox/events").status == 401)
        // An API key is the wrong kind of credential here (a session is needed), as on every session-only route.
        #expect(try await app.call("GET", "/v1/inbox/events", token: who.apiKey).status == 401)
        for (query, parameter) in [("assigned=mine", "assigned"), ("assigned=", "assigned"), ("state=open", "state"),
                                   ("state=started,", "state"), ("state=", "state")] {
            let response = try await app.call("GET", "/v1/inbox/events?\(query)", token: who.agent)
            #expect(response.status == 400, "\(query)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(try response.json()["parameter"] as? String == parameter, "\(query)")
        }
        // Another tenant's genuine position, a forged one, and an altered one are all unknown here.
        let theirs = try await onThread { try Self.open(app, stranger.agent) }
        let theirID = try #require(try await Self.next(theirs, 1).first?.id)
        let mine = try await onThread { try Self.open(app, who.agent) }
        let myID = try #require(try await Self.next(mine, 1).first?.id)
        var altered = Array(myID)
        altered[altered.count / 2] = altered[altered.count / 2] == "A" ? "B" : "A"
        for forged in [theirID, "1", "123:456:", String(altered), String(repeating: "A", count: 3000)] {
            let response = try await app.call("GET", "/v1/inbox/events", token: who.agent, headers: ["Last-Event-ID": forged])
            #expect(response.status == 400, "\(forged.prefix(40))")
            #expect(try response.json()["type"] as? String == "/problems/unknown-event-id")
        }
        await app.stop()
    }

    /// The stream ends with the credential: a revoked session's inbox gets `reconnect` with the reason, then the
    /// end; a new one with that token is refused.
    @Test func aRevokedSessionsInboxEnds() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let stream = try await onThread { try Self.open(app, who.agent) }
        _ = try await Self.next(stream, 1)
        #expect(try await app.call("DELETE", "/v1/sessions/current", token: who.agent).status == 204)
        let rest = try await onThread { try stream.eventsUntilEnd() }.filter { $0.event != "agent.status" }
        #expect(rest.map(\.event) == ["reconnect"])
        #expect(rest.first.map { stream.json($0)["reason"] as? String } == "session_revoked")
        #expect(try await app.call("GET", "/v1/inbox/events", token: who.agent).status == 401)
        await app.stop()
    }

    /// Changes are kept a day: pruning removes older ones, and a position that lacks one of them is refused (its
    /// client starts over from a snapshot) rather than served with a hole; a position after them still resumes.
    @Test func aPositionOlderThanThePrunedChangesIsRefused() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let first = try await onThread { try Self.open(app, who.agent) }
        let old = try #require(try await Self.next(first, 2).last?.id)
        first.socket.shutdownAndClose()
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"a"}"#).status == 201)
        let second = try await onThread { try Self.open(app, who.agent, lastEventID: old) }
        let recent = try #require(try await Self.next(second, 1).last?.id)
        second.socket.shutdownAndClose()
        _ = try await app.database.query("UPDATE interaction_changes SET changed_at = now() - interval '2 days'")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"b"}"#).status == 201)
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let pruned = try await InboxFeed(pool: pool).pruneChanges(olderThan: InboxFeed.resumeWindow)
        await pool.close()
        #expect(pruned == 2)
        // `old` lacks the first message's change, which is gone: refused. (`recent` has it: it would be served, or,
        // if a transaction ran across its snapshot, refused to be safe.)
        let refused = try await app.call("GET", "/v1/inbox/events", token: who.agent, headers: ["Last-Event-ID": old])
        #expect(refused.status == 400)
        #expect(try refused.json()["type"] as? String == "/problems/unknown-event-id")
        _ = recent
        // A position taken after the pruned changes resumes — once no transaction that began before them is still
        // running anywhere in the cluster (the tests' other databases share it), since a snapshot's horizon is the
        // cluster's oldest running transaction: in service, pruned changes are a day old, and no horizon is that far.
        let resumes = await eventually(timeout: .seconds(30)) {
            guard let fresh = try? await onThread({ try Self.open(app, who.agent) }),
                  let now = try? await Self.next(fresh, 2).last?.id else { return false }
            fresh.socket.shutdownAndClose()
            guard let resumed = try? await onThread({ try Self.open(app, who.agent, lastEventID: now) }) else { return false }
            resumed.socket.shutdownAndClose()
            return resumed.status == 200
        }
        #expect(resumes)
        await app.stop()
    }

    /// More streams starting at once than one batch opens: every one opens (the rest in the batches after), and a
    /// change made meanwhile reaches all of them once.
    @Test func aCrowdStartingAtOnceIsOpenedBatchByBatch() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        var agents: [String] = []
        for n in 0 ..< 80 { agents.append(try await app.createSession(apiKey: who.apiKey, user: "crowd-\(n)", role: "agent")) }
        let tokens = agents
        let streams = try await withThrowingTaskGroup(of: EventStreamClient.self) { group in
            for token in tokens { group.addTask { try await onThread { try Self.open(app, token) } } }
            var opened: [EventStreamClient] = []
            for try await stream in group { opened.append(stream) }
            return opened
        }
        #expect(streams.count == 80 && streams.allSatisfy { $0.status == 200 })
        for stream in streams { #expect(try await Self.next(stream, 2).map(\.event) == ["interaction", "snapshot-end"]) }
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"all"}"#).status == 201)
        for stream in streams {
            let change = try await Self.interactions(stream, 1)
            #expect((change.first?["last_message"] as? [String: Any])?["text"] as? String == "all")
            stream.socket.shutdownAndClose()
        }
        await app.stop()
    }

    @Test func inboxStreamsHaveACapOfTheirOwn() async throws {
        let app = try await TestApp.start(streamsPerPrincipal: 1)
        let who = try await InteractionsEndToEndTests.people(app)
        var open: [EventStreamClient] = []
        for _ in 0 ..< 5 {
            let stream = try await onThread { try Self.open(app, who.agent) }
            #expect(stream.status == 200)
            open.append(stream)
        }
        let over = try await app.call("GET", "/v1/inbox/events", token: who.agent)
        #expect(over.status == 429)
        // An interaction stream still opens: the caps are apart.
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let events = try await onThread {
            try EventStreamClient(port: app.port, path: "/v1/interactions/\(id)/events", token: who.agent)
        }
        #expect(events.status == 200)
        for stream in open { stream.socket.shutdownAndClose() }
        await app.stop()
    }
}
