import Foundation
import HTTPServer
import SwitchboardClient
import Testing
import TestSupport

/// What one `events(for:)` stream delivered, read by the test while the consumer task is still running.
final class ReceivedEvents: Sendable {
    private let state = LockedEvents()

    /// Iterates `stream` to its end (or until the task is cancelled), recording everything.
    func collect(_ stream: AsyncStream<InteractionEvent>) async {
        for await event in stream { state.append(event) }
        state.markFinished()
    }

    var all: [InteractionEvent] { state.snapshot.events }
    var isFinished: Bool { state.snapshot.finished }
    var messages: [String] {
        all.compactMap { if case .message(let message) = $0 { message.text } else { nil } }
    }
    var lastState: InteractionEvent.StateChange? {
        all.compactMap { if case .state(let change) = $0 { change } else { nil } }.last
    }
}

/// A lock-guarded list of events and whether the stream ended.
final class LockedEvents: @unchecked Sendable { // `events` and `finished` are guarded by `lock`
    private let lock = NSLock()
    private var events: [InteractionEvent] = []
    private var finished = false
    func append(_ event: InteractionEvent) { lock.withLock { events.append(event) } }
    func markFinished() { lock.withLock { finished = true } }
    var snapshot: (events: [InteractionEvent], finished: Bool) { lock.withLock { (events, finished) } }
}

@Suite("The client SDK's live events against the real server", .timeLimit(.minutes(10)))
struct ClientEventStreamTests {
    /// The servers here ask for short reconnection delays (`retry:`), so the tests do not wait for long.
    static let retry = Duration.milliseconds(100)

    /// A server asking for short reconnection delays, its people, an interaction Alice opened, and Alice's client.
    struct Setup {
        let app: TestApp
        let who: InteractionsEndToEndTests.People
        let id: String
        let client: SwitchboardClient
        var parts: (TestApp, InteractionsEndToEndTests.People, String, SwitchboardClient) { (app, who, id, client) }
    }

    static func setUp(heartbeat: Duration = .seconds(15)) async throws -> Setup {
        let app = try await TestApp.start(heartbeat: heartbeat, reconnectDelay: retry)
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        return Setup(app: app, who: who, id: id, client: client(port: app.port, token: who.alice))
    }

    static func client(port: Int, token: String) -> SwitchboardClient {
        SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, tokenProvider: { token },
                          retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(50)))
    }

    static func send(_ app: TestApp, _ text: String, to id: String, token: String) async throws {
        let response = try await app.call("POST", "/v1/interactions/\(id)/messages", token: token,
                                          body: #"{"text":"\#(text)"}"#)
        #expect(response.status == 201)
    }

    static func eventsRequests(_ app: TestApp) async throws -> Double {
        let metrics = try await app.metrics().text
        return MetricsTests.sample(metrics, #"switchboard_http_requests_total{route="/v1/interactions/{id}/events",method="GET",status="200"}"#) ?? 0
    }

    @Test func everyMessageArrivesOnceInOrderWhileTheServerRestartsAndMessagesKeepComing() async throws {
        let database = try await TestDatabase.create()
        let first = try await TestApp.start(database: database, reconnectDelay: Self.retry)
        let other = try await TestApp.start(database: database, reconnectDelay: Self.retry)
        let who = try await InteractionsEndToEndTests.people(first)
        let id = try await InteractionsEndToEndTests.start(first, who.alice)
        let client = Self.client(port: first.port, token: who.alice)
        let received = ReceivedEvents()
        let consumer = Task { await received.collect(client.events(for: id)) }
        #expect(await eventually { received.lastState != nil }, "connected: the snapshot arrived")

        // The agent writes through the other replica, so messages keep coming while the first one is down.
        let total = 40
        let sender = Task {
            for n in 0 ..< total {
                try await Self.send(other, "m\(n)", to: id, token: who.agent)
                try await Task.sleep(for: .milliseconds(25))
            }
        }
        #expect(await eventually(timeout: .seconds(10)) { received.messages.count >= 8 })
        await first.stopKeepingDatabase()
        try await Task.sleep(for: .milliseconds(200))
        let restarted = try await TestApp.start(database: database, reconnectDelay: Self.retry, port: first.port)
        try await sender.value
        #expect(try await other.call("POST", "/v1/interactions/\(id)/end", token: who.alice, body: "{}").status == 200)

        #expect(await eventually(timeout: .seconds(15)) { received.isFinished })
        consumer.cancel()
        #expect(received.messages == (0 ..< total).map { "m\($0)" })
        #expect(received.lastState?.state == .ended)
        let seqs = received.all.compactMap(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "stored events exactly once, in order")
        #expect(try await Self.eventsRequests(restarted) >= 1, "the client came back to the restarted server")
        #expect(await eventually { client.openEventConnections == 0 })
        await restarted.stopKeepingDatabase()
        await other.stop()
    }

    @Test func connectionsCutMidEventLoseAndRepeatNothing() async throws {
        let (app, who, id, _) = try await Self.setUp().parts
        // Each of the first six connections is cut after a few hundred bytes of the response: mostly mid-event.
        let proxy = try CuttingProxy(upstream: app.port, budgets: [900, 610, 745, 1020, 575, 833])
        let client = Self.client(port: proxy.port, token: who.alice)
        let received = ReceivedEvents()
        let consumer = Task { await received.collect(client.events(for: id)) }
        #expect(await eventually { received.lastState != nil }, "connected: the snapshot arrived")

        let total = 30
        for n in 0 ..< total {
            try await Self.send(app, "message number \(n) with some padding to fill the stream", to: id, token: who.agent)
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(await eventually(timeout: .seconds(15)) { received.messages.count == total })
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent, body: "{}").status == 200)
        #expect(await eventually(timeout: .seconds(10)) { received.isFinished })
        consumer.cancel()

        #expect(received.messages == (0 ..< total).map { "message number \($0) with some padding to fill the stream" })
        #expect(proxy.connections > 6, "every budget was used up, so the stream was cut at least six times")
        let starts = received.all.filter { if case .state(let change) = $0 { change.state == .started } else { false } }
        #expect(starts.count == 1, "reconnections resume from Last-Event-ID rather than starting over")
        proxy.close()
        await app.stop()
    }

    @Test func theStreamsEndWithTheInteractionAndTheClientDoesNotReconnect() async throws {
        let (app, who, id, client) = try await Self.setUp().parts
        let staying = ReceivedEvents(), leaving = ReceivedEvents()
        let stayingTask = Task { await staying.collect(client.events(for: id)) }
        let leavingTask = Task { await leaving.collect(client.events(for: id)) }
        #expect(await eventually { staying.lastState != nil && leaving.lastState != nil })
        #expect(app.app.liveSubscribers == 1, "two consumers share one connection")
        #expect(client.openEventConnections == 1)

        try await Self.send(app, "before", to: id, token: who.agent)
        #expect(await eventually { staying.messages == ["before"] && leaving.messages == ["before"] })
        leavingTask.cancel()
        await leavingTask.value
        try await Self.send(app, "after", to: id, token: who.agent)
        #expect(await eventually { staying.messages == ["before", "after"] })
        #expect(leaving.messages == ["before"], "only the cancelled consumer's stream ended")

        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent, body: "{}").status == 200)
        #expect(await eventually { staying.isFinished })
        await stayingTask.value
        #expect(staying.lastState?.state == .ended)
        #expect(await eventually { client.openEventConnections == 0 && app.app.liveSubscribers == 0 })
        // Ten reconnection delays later, still the one request: the client did not come back.
        try await Task.sleep(for: Self.retry * 10)
        #expect(try await Self.eventsRequests(app) == 1)

        // A stream opened after the end from the latest state gets that final state and finishes at once; one from
        // the beginning gets the whole history, then finishes.
        let late = ReceivedEvents()
        await late.collect(client.events(for: id, from: .latest))
        #expect(late.all.count == 1 && late.lastState?.state == .ended && late.lastState?.isSnapshot == true)
        let history = ReceivedEvents()
        await history.collect(client.events(for: id))
        #expect(history.messages == ["before", "after"] && history.lastState?.state == .ended && history.isFinished)
        await app.stop()
    }

    @Test func theConnectionClosesWhenTheLastConsumerLeavesAndReopensForTheNext() async throws {
        let (app, who, id, client) = try await Self.setUp().parts
        let one = ReceivedEvents(), two = ReceivedEvents()
        let tasks = [Task { await one.collect(client.events(for: id)) }, Task { await two.collect(client.events(for: id)) }]
        #expect(await eventually { app.app.liveSubscribers == 1 && one.lastState != nil && two.lastState != nil })
        for task in tasks { task.cancel() }
        #expect(await eventually { app.app.liveSubscribers == 0 }, "the server saw the connection close")
        #expect(client.openEventConnections == 0)

        try await Self.send(app, "while nobody listened", to: id, token: who.agent)
        let next = ReceivedEvents()
        let nextTask = Task { await next.collect(client.events(for: id)) }
        #expect(await eventually { next.lastState?.state == .started && app.app.liveSubscribers == 1 })
        try await Self.send(app, "live", to: id, token: who.agent)
        // From the beginning of the log: what was said while nobody listened, then what comes live.
        #expect(await eventually { next.messages == ["while nobody listened", "live"] })
        nextTask.cancel()
        #expect(await eventually { app.app.liveSubscribers == 0 })
        await app.stop()
    }

    @Test func aStreamTheServerRefusesEndsWithTheProblemAndIsNotRetried() async throws {
        let (app, who, id, _) = try await Self.setUp().parts
        let bob = Self.client(port: app.port, token: who.bob)
        let received = ReceivedEvents()
        await received.collect(bob.events(for: id))
        guard case .refused(let problem)? = received.all.first, received.all.count == 1 else {
            Issue.record("expected one refusal, got \(received.all)")
            await app.stop()
            return
        }
        #expect(problem.status == 404, "another customer's interaction does not exist for bob")
        try await Task.sleep(for: Self.retry * 5)
        let metrics = try await app.metrics().text
        #expect(MetricsTests.sample(metrics, #"switchboard_http_requests_total{route="/v1/interactions/{id}/events",method="GET",status="404"}"#) == 1)
        #expect(bob.openEventConnections == 0)
        await app.stop()
    }

    @Test func heartbeatsKeepAQuietConnectionOpenAndASilentOneIsReplaced() async throws {
        // The quiet case allows 6 s of silence against heartbeats every 300 ms: under ThreadSanitizer, beside the
        // other time-bound tests, a 1 s stall happened twice and read as a dead connection (and 2 s left little more).
        for (heartbeat, silent) in [(Duration.milliseconds(300), false), (.seconds(60), true)] {
            let (app, who, id, _) = try await Self.setUp(heartbeat: heartbeat).parts
            let proxy = try CuttingProxy(upstream: app.port, budgets: [])
            let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, tokenProvider: { who.alice },
                                           eventPolicy: EventStreamPolicy(idleTimeout: silent ? .seconds(1) : .seconds(6)))
            let received = ReceivedEvents()
            let consumer = Task { await received.collect(client.events(for: id)) }
            #expect(await eventually { received.lastState != nil })
            if silent {
                #expect(await eventually(timeout: .seconds(15)) { proxy.connections >= 3 },
                        "nothing for a second: the connection was presumed dead and replaced, again and again")
            } else {
                // Forty heartbeats later (two of the client's 6 s idle timeouts), still the one connection.
                let heartbeat = ServerSentEvent.comment("heartbeat").count
                let start = proxy.bytesFromServer
                #expect(await eventually(timeout: .seconds(40)) { proxy.bytesFromServer - start >= 40 * heartbeat })
                #expect(proxy.connections == 1, "a heartbeat every 300 ms keeps the one connection alive")
            }
            try await Self.send(app, "still here", to: id, token: who.agent)
            #expect(await eventually { received.messages == ["still here"] })
            consumer.cancel()
            proxy.close()
            await app.stop()
        }
    }
}
