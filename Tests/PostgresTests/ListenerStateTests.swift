import Testing
@testable import Postgres

/// The listener's bookkeeping without a connection: which stream hears what, in which order, and what stop returns.
@Suite(.timeLimit(.minutes(5)))
struct ListenerStateTests {
    /// A stream and what it has received so far.
    struct Probe {
        let stream: AsyncStream<ListenerEvent>
        let continuation: AsyncStream<ListenerEvent>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream(of: ListenerEvent.self) }

        /// Finishes the stream and returns every event it received, as short names.
        func received() async -> [String] {
            continuation.finish()
            var names: [String] = []
            for await event in stream { names.append(Self.name(event)) }
            return names
        }

        static func name(_ event: ListenerEvent) -> String {
            switch event {
            case .connected: return "connected"
            case .reconnected: return "reconnected"
            case .notification(let notice): return "\(notice.channel):\(notice.payload)"
            }
        }
    }

    func notice(_ payload: String) -> PostgresNotification {
        PostgresNotification(channel: "c", payload: payload, senderPID: 1)
    }

    @Test func aStreamHearsConnectedFirstThenReconnectedAfterEachLaterConnection() async {
        var state = ListenerState()
        let early = Probe()
        let step1 = state.subscribe(early.continuation)
        #expect(step1 != nil)  // before any connection: nothing yet
        state.connected(backendPID: 10)
        state.publish([notice("a")])
        state.disconnected(error: PostgresError(.connection, "gone"))
        state.publish([])  // nothing is lost or invented while disconnected
        state.connected(backendPID: 11)
        state.publish([notice("b"), notice("c")])
        #expect(await early.received() == ["connected", "c:a", "reconnected", "c:b", "c:c"])
    }

    @Test func aStreamThatJoinsWhileConnectedHearsConnectedAtOnce() async {
        var state = ListenerState()
        state.connected(backendPID: 10)
        let late = Probe()
        _ = state.subscribe(late.continuation)
        state.connected(backendPID: 12)
        #expect(await late.received() == ["connected", "reconnected"])
    }

    @Test func aStreamOfSomeChannelsHearsTheirNotificationsAndEveryConnectionEvent() async {
        var state = ListenerState()
        let all = Probe(), one = Probe(), two = Probe(), none = Probe()
        _ = state.subscribe(all.continuation)
        _ = state.subscribe(one.continuation, channels: ["a"])
        _ = state.subscribe(two.continuation, channels: ["a", "b"])
        _ = state.subscribe(none.continuation, channels: [])
        state.connected(backendPID: 10)
        let on = { (channel: String, payload: String) in
            PostgresNotification(channel: channel, payload: payload, senderPID: 1)
        }
        state.publish([on("a", "1"), on("b", "2"), on("c", "3"), on("a", "4")])
        state.connected(backendPID: 11)
        state.publish([on("b", "5")])
        #expect(await all.received() == ["connected", "a:1", "b:2", "c:3", "a:4", "reconnected", "b:5"])
        #expect(await one.received() == ["connected", "a:1", "a:4", "reconnected"])
        #expect(await two.received() == ["connected", "a:1", "b:2", "a:4", "reconnected", "b:5"])
        #expect(await none.received() == ["connected", "reconnected"])
    }

    @Test func anUnsubscribedStreamHearsNothingMore() async {
        var state = ListenerState()
        let probe = Probe()
        let id = state.subscribe(probe.continuation)!
        state.connected(backendPID: 10)
        state.unsubscribe(id)
        state.publish([notice("x")])
        #expect(await probe.received() == ["connected"])
    }

    @Test func disconnectionKeepsTheLastErrorAndForgetsTheBackend() {
        var state = ListenerState()
        state.connected(backendPID: 10)
        #expect(state.backendPID == 10)
        state.disconnected(error: PostgresError(.connection, "reset"))
        #expect(state.backendPID == nil && state.lastError?.message.contains("reset") == true)
        state.disconnected(error: nil)  // a clean close keeps the last failure for operators
        #expect(state.lastError?.message.contains("reset") == true)
    }

    @Test func startRunsOnceAndNeverAfterStop() async {
        var state = ListenerState()
        var made = 0
        #expect(state.start { made += 1; return Task {} })
        #expect(!state.start { made += 1; return Task {} })
        #expect(made == 1)
        let probe = Probe()
        _ = state.subscribe(probe.continuation)
        let (task, continuations) = state.stop()
        #expect(task != nil && continuations.count == 1 && state.isStopped)
        // Stopped for good: no restart, no new stream, no more events; a second stop returns the same task.
        #expect(!state.start { made += 1; return Task {} })
        let step2 = state.subscribe(Probe().continuation)
        #expect(step2 == nil)
        state.connected(backendPID: 13)
        #expect(state.backendPID == nil)
        let (again, none) = state.stop()
        #expect(again == task && none.isEmpty)
        #expect(await probe.received() == [])
    }

    @Test func stoppingAnIdleListenerHasNoTaskToCancel() {
        var state = ListenerState()
        let (task, continuations) = state.stop()
        #expect(task == nil && continuations.isEmpty)
    }
}
