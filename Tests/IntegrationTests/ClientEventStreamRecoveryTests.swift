import Foundation
import SwitchboardClient
import Testing
import TestSupport

/// Hands out the given tokens in turn, then keeps returning the last one.
final class TokenSequence: @unchecked Sendable { // `tokens` is guarded by `lock`
    private let lock = NSLock()
    private var tokens: [String]
    init(_ tokens: [String]) { self.tokens = tokens }
    func next() -> String {
        lock.withLock { tokens.count > 1 ? tokens.removeFirst() : tokens[0] }
    }
}

@Suite("The client SDK's live events: joining late, outages, tokens", .timeLimit(.minutes(10)))
struct ClientEventStreamRecoveryTests {
    static let retry = ClientEventStreamTests.retry

    /// An interaction opened through a first server, and a port where its server is not running yet.
    static func interactionWithItsServerDown() async throws
        -> (TestDatabase, TestApp, InteractionsEndToEndTests.People, String, Int) {
        let database = try await TestDatabase.create()
        let setup = try await TestApp.start(database: database, reconnectDelay: retry)
        let who = try await InteractionsEndToEndTests.people(setup)
        let id = try await InteractionsEndToEndTests.start(setup, who.alice)
        return (database, setup, who, id, Loopback.unusedPort())
    }

    static func eventsRequests(_ app: TestApp, status: Int) async throws -> Double {
        let metrics = try await app.metrics().text
        return MetricsTests.sample(metrics, #"switchboard_http_requests_total{route="/v1/interactions/{id}/events",method="GET",status="\#(status)"}"#) ?? 0
    }

    @Test func aLateSubscriberStartsFromTheStateAsOfTheLatestEvent() async throws {
        let (app, who, id, client) = try await ClientEventStreamTests.setUp().parts
        let early = ReceivedEvents()
        let earlyTask = Task { await early.collect(client.events(for: id)) }
        #expect(await eventually { early.lastState != nil })
        for text in ["one", "two"] { try await ClientEventStreamTests.send(app, text, to: id, token: who.agent) }
        #expect(await eventually { early.messages == ["one", "two"] })
        let latestSeq = early.all.compactMap(\.seq).max()

        let late = ReceivedEvents()
        let lateTask = Task { await late.collect(client.events(for: id)) }
        #expect(await eventually { late.lastState != nil })
        guard case .state(let first)? = late.all.first else {
            Issue.record("a late subscriber must start with the state, got \(late.all)")
            return
        }
        #expect(first.isSnapshot && first.state == .started)
        #expect(first.seq == latestSeq, "current as of the last event the others received, so nothing is unaccounted for")
        #expect(app.app.liveSubscribers == 1, "still one connection")
        try await ClientEventStreamTests.send(app, "three", to: id, token: who.agent)
        #expect(await eventually { late.messages == ["three"] && early.messages == ["one", "two", "three"] })
        earlyTask.cancel()
        lateTask.cancel()
        await app.stop()
    }

    @Test func aServerThatIsDownAtFirstIsRetriedUntilItAnswers() async throws {
        let (database, setup, who, id, port) = try await Self.interactionWithItsServerDown()
        let client = SwitchboardClient(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, tokenProvider: { who.alice },
            eventPolicy: EventStreamPolicy(defaultReconnectDelay: .milliseconds(100), maximumReconnectDelay: .milliseconds(400)))
        let received = ReceivedEvents()
        let consumer = Task { await received.collect(client.events(for: id)) }
        try await Task.sleep(for: .milliseconds(700))
        #expect(received.all.isEmpty && !received.isFinished, "refused connections are retried, not reported")

        let app = try await TestApp.start(database: database, reconnectDelay: Self.retry, port: port)
        #expect(await eventually(timeout: .seconds(10)) { received.lastState?.state == .started })
        consumer.cancel()
        await app.stopKeepingDatabase()
        await setup.stop()
    }

    @Test func reconnectingNowSkipsTheRestOfALongBackoff() async throws {
        let (database, setup, who, id, port) = try await Self.interactionWithItsServerDown()
        // A first retry after 20 s: without the nudge the stream could not connect within this test's waits.
        let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, tokenProvider: { who.alice },
                                       eventPolicy: EventStreamPolicy(defaultReconnectDelay: .seconds(20), jitter: 0))
        let received = ReceivedEvents()
        let consumer = Task { await received.collect(client.events(for: id)) }
        try await Task.sleep(for: .milliseconds(300))
        let app = try await TestApp.start(database: database, reconnectDelay: Self.retry, port: port)
        try await Task.sleep(for: .milliseconds(300))
        #expect(received.all.isEmpty, "still waiting out its backoff")
        client.reconnectEventStreams() // the network is back
        #expect(await eventually(timeout: .seconds(5)) { received.lastState?.state == .started })
        consumer.cancel()
        await app.stopKeepingDatabase()
        await setup.stop()
    }

    @Test func a401IsRetriedOnceWithAFreshTokenAndThenReported() async throws {
        let (app, who, id, _) = try await ClientEventStreamTests.setUp().parts

        // An expired token first; the provider's next one works.
        let tokens = TokenSequence(["sbs_expired0000000000000000000000000000000", who.alice])
        let refreshing = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(app.port)")!, tokenProvider: { tokens.next() })
        let received = ReceivedEvents()
        let consumer = Task { await received.collect(refreshing.events(for: id)) }
        #expect(await eventually(timeout: .seconds(10)) { received.lastState?.state == .started })
        #expect(try await Self.eventsRequests(app, status: 401) == 1)
        consumer.cancel()

        // A revoked session stays refused: reported after the second 401, and not retried again.
        #expect(try await app.call("DELETE", "/v1/sessions/current", token: who.alice).status == 204)
        let revoked = ClientEventStreamTests.client(port: app.port, token: who.alice)
        let refused = ReceivedEvents()
        await refused.collect(revoked.events(for: id))
        guard case .refused(let problem)? = refused.all.last, refused.all.count == 1 else {
            Issue.record("expected one refusal, got \(refused.all)")
            return
        }
        #expect(problem.status == 401)
        try await Task.sleep(for: Self.retry * 5)
        #expect(try await Self.eventsRequests(app, status: 401) == 3)
        await app.stop()
    }

    @Test func streamsOutliveTheirClientObjectAndStillCloseWithTheLastSubscriber() async throws {
        let (app, who, id, _) = try await ClientEventStreamTests.setUp().parts
        let stream = ClientEventStreamTests.client(port: app.port, token: who.alice).events(for: id)
        // The client object is gone; its stream is not.
        let received = ReceivedEvents()
        let consumer = Task { await received.collect(stream) }
        #expect(await eventually { received.lastState != nil })
        try await ClientEventStreamTests.send(app, "hello", to: id, token: who.agent)
        #expect(await eventually { received.messages == ["hello"] })
        consumer.cancel()
        #expect(await eventually { app.app.liveSubscribers == 0 }, "the connection closed with its last subscriber")
        await app.stop()
    }
}
