import Foundation
import Testing
import TestSupport

/// A new stream of a live interaction may open with a snapshot remembered from an earlier stream instead of reading
/// one. Whether it does or not, it must get every event after its snapshot exactly once, in order, while messages are
/// being committed as it attaches; and only callers who may see the interaction are answered from memory.
@Suite("Event streams started from memory", .timeLimit(.minutes(10)))
struct StreamStartMemoryTests {
    typealias Stream = InteractionStreamTests

    @Test(arguments: [UInt64(3), 1_207])
    func streamsStartedWhileMessagesCommitGetEveryLaterEventOnce(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        // The first stream reads its snapshot and leaves it for the next ones, which attach while nothing is written
        // (until one opens from memory: the interaction's opening notice may still be on its way, and forgets it).
        var clients: [(client: EventStreamClient, after: Int64)] = []
        try await attachUntilOneStartsFromMemory(app, id, who.alice, into: &clients)
        // Another customer is not answered from memory: the interaction is not theirs.
        #expect(try await Stream.follow(app, id, who.bob).status == 404)

        let writer = Task { () async throws in
            for n in 0 ..< 40 {
                #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"m\#(n)"}"#).status == 201)
            }
        }
        for n in 0 ..< 14 {
            try await Task.sleep(for: .milliseconds(Int.random(in: 0 ... 40, using: &random)))
            let client = try await Stream.follow(app, id, n % 2 == 0 ? who.alice : who.agent)
            #expect(client.status == 200)
            clients.append((client, 0))
        }
        try await writer.value
        // Once the first stream has all 40 messages, every notice was dispatched: a stream starting now, from memory
        // or not, must start at the last of them (a start remembered across a notice would be older).
        let leader = clients[0].client
        let caughtUp = try await onThread { try leader.events(40) }
        #expect(caughtUp.last?.id == "41")
        clients[0].after = 41
        try await attachUntilOneStartsFromMemory(app, id, who.agent, into: &clients, startingAt: 41)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent).status == 200)

        for (client, after) in clients {
            let events = try await onThread { try client.eventsUntilEnd() }
            let stored = events.compactMap { $0.id.flatMap { Int64($0) } }
            // The first stored event is the snapshot, or, for a stream whose snapshot was read already, the next one.
            guard let from = stored.first else {
                Issue.record("a stream got no stored event")
                continue
            }
            if after > 0 { #expect(from == after + 1) }
            #expect(stored == Array(from ... from + Int64(stored.count) - 1), "ids \(stored)")
            // 1 started, 40 messages, 1 ended.
            #expect(stored.last == 42)
            #expect(events.last?.event == "state" && client.ended)
        }
        #expect(app.app.streamsStartedFromMemory >= 2)
        await app.stop()
    }

    /// A stream started from memory is answered on the server's thread, without a task for its request: its client
    /// leaving must still end it and release its subscription.
    @Test func aStreamStartedFromMemoryEndsWhenItsClientLeaves() async throws {
        let (app, _, _, clients) = try await aliceStreamsUntilOneStartsFromMemory()
        #expect(await eventually { app.app.liveSubscribers == clients.count })
        clients.last?.client.socket.shutdownAndClose()
        // Noticed by the socket's watch, not at the next heartbeat (15 s) that would fail to be sent.
        #expect(await eventually(timeout: .seconds(8)) { app.app.liveSubscribers == clients.count - 1 })
        for (client, _) in clients.dropLast() { client.socket.shutdownAndClose() }
        #expect(await eventually { app.app.liveSubscribers == 0 })
        await app.stop()
    }

    /// Once a start is remembered, the answer from memory serves new streams alone: an unusable `Last-Event-ID` (in the
    /// header or the query) still gets its 400, never a snapshot as if the stream were new.
    @Test func anUnusableLastEventIDIsRefusedWhileTheStartIsRemembered() async throws {
        let (app, who, id, clients) = try await aliceStreamsUntilOneStartsFromMemory()
        #expect(app.app.liveSubscribers == clients.count)
        for garbage in ["abc", "-1", "1.5"] {
            let refused = try await Stream.follow(app, id, who.alice, lastEventID: garbage)
            #expect(refused.status == 400, "Last-Event-ID: \(garbage)")
            refused.socket.shutdownAndClose()
            let port = app.port, token = who.alice
            let queried = try await onThread {
                try EventStreamClient(port: port, path: "/v1/interactions/\(id)/events?last_event_id=\(garbage)", token: token)
            }
            #expect(queried.status == 400, "last_event_id=\(garbage)")
            queried.socket.shutdownAndClose()
        }
        // Still remembered: a new stream is answered from memory after the refusals.
        let before = app.app.streamsStartedFromMemory
        let fresh = try await Stream.follow(app, id, who.alice)
        #expect(fresh.status == 200 && app.app.streamsStartedFromMemory == before + 1)
        fresh.socket.shutdownAndClose()
        for (client, _) in clients { client.socket.shutdownAndClose() }
        #expect(await eventually { app.app.liveSubscribers == 0 })
        await app.stop()
    }

    /// A new app with one interaction of Alice's, followed by her streams until one opened from memory (its start
    /// is remembered from then on).
    private func aliceStreamsUntilOneStartsFromMemory() async throws
        -> (TestApp, InteractionsEndToEndTests.People, String, [(client: EventStreamClient, after: Int64)]) {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        var clients: [(client: EventStreamClient, after: Int64)] = []
        try await attachUntilOneStartsFromMemory(app, id, who.alice, into: &clients)
        return (app, who, id, clients)
    }

    /// Attaches streams of `id` one after another, each reading its snapshot (whose id must be `startingAt`, when
    /// given), until one opened from memory (at most 50); adds each, with its snapshot's id, to `clients`.
    private func attachUntilOneStartsFromMemory(_ app: TestApp, _ id: String, _ token: String,
                                                into clients: inout [(client: EventStreamClient, after: Int64)],
                                                startingAt expected: Int64? = nil) async throws {
        let before = app.app.streamsStartedFromMemory
        for _ in 0 ..< 50 where app.app.streamsStartedFromMemory == before {
            let client = try await Stream.follow(app, id, token)
            let snapshot = try await onThread { try client.events(1) }
            #expect(snapshot.first?.event == "state")
            if let expected { #expect(snapshot.first?.id == String(expected)) }
            clients.append((client, snapshot.first?.id.flatMap { Int64($0) } ?? 0))
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(app.app.streamsStartedFromMemory > before)
    }
}
