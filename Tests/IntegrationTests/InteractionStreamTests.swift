import Foundation
import Testing
import TestSupport

@Suite("Interactions over Server-Sent Events", .timeLimit(.minutes(10)))
struct InteractionStreamTests {
    typealias People = InteractionsEndToEndTests.People

    static func follow(_ app: TestApp, _ id: String, _ token: String, lastEventID: String? = nil) async throws -> EventStreamClient {
        let port = app.port
        return try await onThread {
            try EventStreamClient(port: port, path: "/v1/interactions/\(id)/events", token: token, lastEventID: lastEventID)
        }
    }

    @Test func twoSubscribersSeeTheWholeInteractionInOrderAndTheStreamEnds() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let customer = try await Self.follow(app, id, who.alice)
        let agent = try await Self.follow(app, id, who.agent)
        #expect(customer.status == 200 && agent.status == 200)
        let snapshots = try await onThread { (try customer.events(1), try agent.events(1)) }
        #expect(snapshots.0.first?.event == "state")
        #expect(customer.json(snapshots.0[0])["state"] as? String == "started")
        #expect(customer.retry == 2000)
        #expect(await eventually { app.app.liveSubscribers == 2 })

        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"Line one\nLine two"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/typing", token: who.agent, body: #"{"typing":true}"#).status == 202)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/media", token: who.agent, body: #"{"kind":"screen","state":"requested"}"#).status == 201)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent).status == 200)

        for client in [customer, agent] {
            let all = try await onThread { try client.eventsUntilEnd() }
            // Typing is not stored, yet it keeps its place between the stored events: each notice is dispatched
            // with its own event only, in commit order, so a late log read cannot bring later events before it
            // (nor the final one, which would close the streams before typing arrived).
            #expect(all.map(\.event) == ["message", "typing", "media", "state"])
            let typing = all.filter { $0.event == "typing" }
            let rest = all.filter { $0.event != "typing" }
            #expect(client.json(rest[0])["text"] as? String == "Line one\nLine two")
            #expect(typing.count == 1 && typing.first?.id == nil)
            #expect(typing.first.map { client.json($0)["typing"] as? Bool } == true)
            #expect(client.json(rest[2])["state"] as? String == "ended")
            let ids = rest.compactMap { $0.id.flatMap { Int64($0) } }
            #expect(ids == ids.sorted() && ids.count == 3)
            #expect(client.ended)
        }
        #expect(await eventually { app.app.liveSubscribers == 0 })
        await app.stop()
    }

    @Test func resumingWithLastEventIDLosesAndRepeatsNothing() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        // The first connection takes the snapshot before any message exists; then messages start flowing.
        let first = try await Self.follow(app, id, who.alice)
        let snapshot = try await onThread { try first.events(1) }
        var lastID = snapshot.first?.id
        let writer = Task {
            for n in 0 ..< 60 {
                _ = try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"m\#(n)"}"#)
            }
        }
        var seen: [String] = []
        // Read a few events, drop the connection, resume from the last id — while messages keep coming.
        var client = first
        for round in 0 ..< 4 {
            if round > 0 { client = try await Self.follow(app, id, who.alice, lastEventID: lastID) }
            let current = client
            let events = try await onThread { try current.events(5) }
            current.socket.shutdownAndClose()
            for event in events where event.event == "message" { seen.append(current.json(event)["text"] as? String ?? "?") }
            lastID = events.last(where: { $0.id != nil })?.id ?? lastID
        }
        try await writer.value
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.alice).status == 200)
        let last = try await Self.follow(app, id, who.alice, lastEventID: lastID)
        let tail = try await onThread { try last.eventsUntilEnd() }
        for event in tail where event.event == "message" { seen.append(last.json(event)["text"] as? String ?? "?") }
        #expect(tail.last?.event == "state")
        #expect(seen == (0 ..< 60).map { "m\($0)" })
        await app.stop()
    }

    @Test func anotherCustomersStreamIsNotFoundAndBadIDsAre400() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let response = try await app.call("GET", "/v1/interactions/\(id)/events", token: who.bob)
        #expect(response.status == 404)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/events?last_event_id=abc", token: who.alice).status == 400)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/events").status == 401)
        await app.stop()
    }

    @Test func subscribersThatLeaveAreCountedOut() async throws {
        let app = try await TestApp.start(heartbeat: .milliseconds(200))
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        var clients: [EventStreamClient] = []
        for _ in 0 ..< 5 { clients.append(try await Self.follow(app, id, who.alice)) }
        for client in clients { _ = try await onThread { try client.events(1) } }
        #expect(await eventually { app.app.liveSubscribers == 5 })
        for client in clients { client.socket.shutdownAndClose() }
        #expect(await eventually(timeout: .seconds(10)) { app.app.liveSubscribers == 0 })
        await app.stop()
    }

    /// One port: a stream asked for on the main port is held by the streams' own daemon, so the main daemon's
    /// resumes never walk it; a stream asked for on a connection that began with an API call stays in the main one.
    @Test func streamsOnTheMainPortAreHeldByTheirOwnDaemon() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        #expect(app.app.streamPort == nil)
        var clients: [EventStreamClient] = []
        for _ in 0 ..< 3 { clients.append(try await Self.follow(app, id, who.alice)) }
        for client in clients { _ = try await onThread { try client.events(1) } }
        #expect(app.app.openStreams == (main: 0, streams: 3))
        let metrics = try await app.call("GET", "/metrics", token: TestApp.metricsToken)
        #expect(metrics.text.contains(#"switchboard_http_open_streams{daemon="streams"} 3"#))
        #expect(metrics.text.contains(#"switchboard_http_open_streams{daemon="main"} 0"#))

        // Kept alive after an API call: the connection stays with the main daemon, and is still served.
        let (port, token) = (app.port, who.alice)
        let reused = try await onThread { () -> RawSocket in
            let socket = try RawSocket(port: port)
            try socket.send("GET /v1/interactions/\(id) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            #expect(try socket.readResponse().status == 200)
            try socket.send("GET /v1/interactions/\(id)/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let head = String(decoding: try socket.read(until: "event: "), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 200"))
            return socket
        }
        #expect(await eventually { app.app.openStreams == (main: 1, streams: 3) })
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"hi"}"#).status == 201)
        for client in clients {
            let next = try await onThread { try client.events(1) }
            #expect(next.first?.event == "message")
        }
        reused.shutdownAndClose()
        for client in clients { client.socket.shutdownAndClose() }
        await app.stop()
    }

    /// The streams' daemon keeps 4 KiB per connection: a stream whose head is as long as the front looks at (2 KiB)
    /// lands there and carries events larger than that memory; a longer head is served by the main daemon instead.
    @Test func streamHeadsUpToTwoKilobytesAreHeldByTheStreamsDaemonAndLongerOnesByTheMain() async throws {
        let app = try await TestApp.start(streamListener: true)
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let (port, path, token) = (app.port, "/v1/interactions/\(id)/events", who.alice)
        let base = "GET \(path) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n"
        // A header line making the whole head `total` bytes long, give or take one.
        let padding: @Sendable (Int) -> String = { total in
            "X-Padding: \(String(repeating: "p", count: total - base.utf8.count - 16))\r\n"
        }
        let fitting = try await onThread { try EventStreamClient(port: port, path: path, token: token, extraHeaders: padding(2040)) }
        let long = try await onThread { try EventStreamClient(port: port, path: path, token: token, extraHeaders: padding(3000)) }
        #expect(fitting.status == 200)
        #expect(long.status == 200)
        for client in [fitting, long] { _ = try await onThread { try client.events(1) } }
        // HTTP/1.0: no chunks, so the body goes out through the response's own (small) block instead of the pool.
        let plain = try await onThread { () -> RawSocket in
            let socket = try RawSocket(port: port)
            try socket.send("GET \(path) HTTP/1.0\r\nAuthorization: Bearer \(token)\r\n\r\n")
            _ = try socket.read(until: "event: state")
            return socket
        }
        #expect(await eventually { app.app.openStreams == (main: 1, streams: 2) })
        let text = String(repeating: "long message ", count: 300)
        let body = try JSONSerialization.data(withJSONObject: ["text": text])
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent,
                                   body: String(decoding: body, as: UTF8.self)).status == 201)
        for client in [fitting, long] {
            let next = try await onThread { try client.events(1) }
            #expect(next.first?.event == "message")
            #expect(next.first.map { client.json($0)["text"] as? String } == text)
        }
        let plainBytes = try await onThread { try plain.read(until: "\(text)\"") }
        #expect(String(decoding: plainBytes, as: UTF8.self).contains("event: message"))
        plain.shutdownAndClose()
        // Asked for directly on the streams' port, a head beyond that memory is refused by libmicrohttpd.
        let streamPort = try #require(app.app.streamPort)
        let refused = try await onThread { () -> Int in
            let socket = try RawSocket(port: streamPort)
            try socket.send(base + padding(6000) + "\r\n")
            return try socket.readResponse().status
        }
        #expect(refused == 431)
        for client in [fitting, long] { client.socket.shutdownAndClose() }
        await app.stop()
    }

    @Test func streamsAreServedOnTheirOwnListenerToo() async throws {
        let app = try await TestApp.start(streamListener: true)
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let streamPort = try #require(app.app.streamPort)
        #expect(streamPort != app.port)
        let client = try await onThread {
            try EventStreamClient(port: streamPort, path: "/v1/interactions/\(id)/events", token: who.alice)
        }
        #expect(client.status == 200)
        _ = try await onThread { try client.events(1) }
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"hi"}"#).status == 201)
        let next = try await onThread { try client.events(1) }
        #expect(next.first?.event == "message")
        await app.stop()
    }

    @Test func anEndedInteractionStreamsItsFinalStateAndCloses() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/fail", token: who.agent, body: #"{"reason":"network"}"#).status == 200)
        let client = try await Self.follow(app, id, who.alice)
        let events = try await onThread { try client.eventsUntilEnd() }
        #expect(events.count == 1)
        #expect(client.json(events[0])["state"] as? String == "failed")
        #expect(client.json(events[0])["failure_reason"] as? String == "network")
        await app.stop()
    }
}

@Suite("Interaction events across replicas", .timeLimit(.minutes(10)))
struct InteractionStreamAcrossProcessesTests {
    @Test func subscribeOnOneProcessPostOnAnother() async throws {
        let database = try await TestDatabase.create()
        let replicas = try await database.launchReplicas()
        let (a, b) = (replicas[0], replicas[1])
        func call(_ port: Int, _ method: String, _ path: String, _ token: String, _ body: String? = nil) async throws -> RawResponse {
            try await request(port: port, method, path, headers: ["Authorization": "Bearer \(token)"], body: body)
        }
        let apiKey = try await call(a.port, "POST", "/v1/admin/tenants", TestApp.adminToken, #"{"name":"R"}"#).json()["api_key"] as? String ?? ""
        let alice = try await call(a.port, "POST", "/v1/sessions", apiKey, #"{"user_id":"alice","role":"customer"}"#).json()["token"] as? String ?? ""
        let id = try await call(a.port, "POST", "/v1/interactions", alice, #"{"subject":"x"}"#).json()["id"] as? String ?? ""
        let port = a.port
        let client = try await onThread { try EventStreamClient(port: port, path: "/v1/interactions/\(id)/events", token: alice) }
        _ = try await onThread { try client.events(1) }
        #expect(try await call(b.port, "POST", "/v1/interactions/\(id)/messages", alice, #"{"text":"via B"}"#).status == 201)
        let arrived = try await onThread { try client.events(1, timeout: 10) }
        #expect(arrived.first?.event == "message")
        #expect(client.json(arrived[0])["text"] as? String == "via B")
        try await database.stop(replicas)
    }
}

@Suite("Interaction events after a lost listener", .timeLimit(.minutes(10)))
struct InteractionStreamCatchUpTests {
    @Test func eventsCommittedWhileTheListenerWasDownStillArrive() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let client = try await InteractionStreamTests.follow(app, id, who.alice)
        _ = try await onThread { try client.events(1) }
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"before"}"#).status == 201)
        #expect(try await onThread { try client.events(1) }.first.map { client.json($0)["text"] as? String } == "before")

        // Cut the process's LISTEN connection, and write while it is gone: that notice never reaches this process.
        let killed = try await app.database.query("""
            SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'switchboard-listener'
            """)
        #expect(try killed[0].decode("n", as: Int64.self) == 1)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"during"}"#).status == 201)
        let caughtUp = try await onThread { try client.events(1, timeout: 15) }
        #expect(caughtUp.first.map { client.json($0)["text"] as? String } == "during")
        await app.stop()
    }
}

@Suite("Shutdown with clients attached", .timeLimit(.minutes(10)))
struct ShutdownTests {
    @Test func streamsGetAFinalReconnectEventAndEnd() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let client = try await InteractionStreamTests.follow(app, id, who.alice)
        _ = try await onThread { try client.events(1) }
        let shutdown = Task { await app.app.shutdown() }
        let rest = try await onThread { try client.eventsUntilEnd() }
        #expect(rest.last?.event == "reconnect")
        #expect(client.json(rest.last!)["reason"] as? String == "shutdown")
        #expect(client.ended)
        await shutdown.value
        await app.database.drop()
    }

    @Test func sigtermUnderLoadKeepsEveryAcknowledgedWrite() async throws {
        let database = try await TestDatabase.create()
        let replicas = try await database.launchReplicas()
        let server = replicas[0]
        let port = server.port
        func call(_ method: String, _ path: String, _ token: String, _ body: String? = nil) async throws -> RawResponse {
            try await request(port: port, method, path, headers: ["Authorization": "Bearer \(token)"], body: body)
        }
        let apiKey = try await call("POST", "/v1/admin/tenants", TestApp.adminToken, #"{"name":"S"}"#).json()["api_key"] as? String ?? ""
        let alice = try await call("POST", "/v1/sessions", apiKey, #"{"user_id":"alice","role":"customer"}"#).json()["token"] as? String ?? ""
        let id = try await call("POST", "/v1/interactions", alice, #"{"subject":"load"}"#).json()["id"] as? String ?? ""
        let acknowledged = Counter()
        let writers = (0 ..< 8).map { writer in
            Task { () -> [String] in
                var mine: [String] = []
                for n in 0 ..< 10_000 {
                    let text = "w\(writer)-\(n)"
                    guard let response = try? await call("POST", "/v1/interactions/\(id)/messages", alice, #"{"text":"\#(text)"}"#)
                    else { break }
                    if response.status == 201 { mine.append(text); acknowledged.increment() }
                }
                return mine
            }
        }
        #expect(await eventually { acknowledged.count >= 50 })
        server.child.signal(SIGTERM)
        var acked: [String] = []
        for writer in writers { acked += await writer.value }
        let status = try await onThread { _ = server.child.readToEnd(); return server.child.wait() }
        #expect(status == 0)
        let stored = Set(try await database.query("SELECT payload->>'text' AS text FROM interaction_events WHERE kind = 'message'")
            .map { try $0.decode("text", as: String.self) })
        #expect(acked.count >= 50)
        #expect(Set(acked).isSubset(of: stored), "acknowledged but missing: \(Set(acked).subtracting(stored).prefix(5))")
        try await database.stop([replicas[1]])
    }
}
