import SwitchboardClient
import Testing
import TestSupport

/// Fan-out to concurrent consumers, leaving by cancellation, and shutting everyone down.
@Suite(.timeLimit(.minutes(5)))
struct SubscriberRegistryTests {
    /// Starts a task that collects everything `stream` delivers until it ends.
    func consume(_ stream: AsyncStream<Int>, into collected: Collected<Int>) -> Task<Void, Never> {
        Task {
            for await event in stream { collected.append(event) }
        }
    }

    @Test func eachSubscribeGetsItsOwnStreamOfEveryEvent() async {
        let registry = EventFanOut<Int>()
        let first = Collected<Int>(), second = Collected<Int>()
        let tasks = [consume(registry.subscribe(), into: first), consume(registry.subscribe(), into: second)]
        #expect(registry.count == 2)

        for event in 1 ... 3 { registry.yield(event) }
        registry.finish()
        for task in tasks { await task.value }
        #expect(first.all == [1, 2, 3])
        #expect(second.all == [1, 2, 3])
    }

    @Test func aCancelledConsumerLeavesAndTheOtherKeepsReceiving() async {
        let emptied = Collected<Void>()
        let registry = EventFanOut<Int>(onEmpty: { emptied.append(()) })
        let leaving = Collected<Int>(), staying = Collected<Int>()
        let leavingTask = consume(registry.subscribe(), into: leaving)
        let stayingTask = consume(registry.subscribe(), into: staying)

        registry.yield(1)
        await waitUntil { leaving.all == [1] && staying.all == [1] }
        leavingTask.cancel()
        await leavingTask.value
        await waitUntil { registry.count == 1 }
        #expect(registry.count == 1)
        #expect(emptied.all.isEmpty)

        registry.yield(2)
        await waitUntil { staying.all == [1, 2] }
        #expect(staying.all == [1, 2])
        #expect(leaving.all == [1])

        stayingTask.cancel()
        await stayingTask.value
        await waitUntil { registry.count == 0 }
        #expect(registry.count == 0)
        await waitUntil { emptied.all.count == 1 }
        #expect(emptied.all.count == 1)
    }

    @Test func finishEndsEveryStreamAndForgetsThem() async {
        let emptied = Collected<Void>()
        let registry = EventFanOut<Int>(onEmpty: { emptied.append(()) })
        let collected = (0 ..< 4).map { _ in Collected<Int>() }
        let tasks = collected.map { consume(registry.subscribe(), into: $0) }
        registry.yield(1)

        registry.finish()
        for task in tasks { await task.value } // returns only because every `for await` loop exited
        #expect(registry.count == 0)
        #expect(collected.allSatisfy { $0.all == [1] })
        #expect(emptied.all.isEmpty)
    }

    @Test func subscribingAfterFinishGetsAnAlreadyFinishedStream() async {
        let registry = EventFanOut<Int>()
        registry.finish()
        let stream = registry.subscribe()
        #expect(registry.count == 0)
        registry.yield(1)
        var received: [Int] = []
        for await event in stream { received.append(event) }
        #expect(received.isEmpty)
    }

    @Test func droppingAStreamUnsubscribes() async {
        let emptied = Collected<Void>()
        let registry = EventFanOut<Int>(onEmpty: { emptied.append(()) })
        _ = registry.subscribe()
        await waitUntil { registry.count == 0 }
        #expect(registry.count == 0)
        #expect(emptied.all.count == 1)
    }

    @Test func onEmptyRunsOnceWhenTheLastOfManyConsumersLeaves() async {
        let emptied = Collected<Void>()
        let registry = EventFanOut<Int>(onEmpty: { emptied.append(()) })
        let tasks = (0 ..< 20).map { _ in consume(registry.subscribe(), into: Collected<Int>()) }
        #expect(registry.count == 20)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await waitUntil { registry.count == 0 && emptied.all.count == 1 }
        #expect(registry.count == 0)
        #expect(emptied.all.count == 1)
    }

    @Test func concurrentYieldsReachEverySubscriberInTheSameOrder() async {
        let registry = EventFanOut<Int>()
        let collected = (0 ..< 3).map { _ in Collected<Int>() }
        let consumers = collected.map { consume(registry.subscribe(), into: $0) }
        await withTaskGroup(of: Void.self) { group in
            for producer in 0 ..< 4 {
                group.addTask { for n in 0 ..< 100 { registry.yield(producer * 1000 + n) } }
            }
        }
        registry.finish()
        for task in consumers { await task.value }
        #expect(collected[0].all.count == 400)
        #expect(collected[1].all == collected[0].all)
        #expect(collected[2].all == collected[0].all)
    }
}

/// The retained event: what a subscriber that joins late gets first.
@Suite(.timeLimit(.minutes(5)))
struct SubscriberRegistryRetainedEventTests {
    @Test func aLateSubscriberStartsWithTheLatestRetainedEventThenLiveOnes() async {
        let registry = EventFanOut<String>()
        let early = registry.subscribe()
        registry.yield("state: started", retain: true)
        registry.yield("message 1")
        registry.yield("state: on hold", retain: true)
        registry.yield("message 2")
        let late = registry.subscribe()
        registry.yield("message 3")
        registry.finish()

        var earlyEvents: [String] = []
        for await event in early { earlyEvents.append(event) }
        var lateEvents: [String] = []
        for await event in late { lateEvents.append(event) }
        #expect(earlyEvents == ["state: started", "message 1", "state: on hold", "message 2", "message 3"])
        #expect(lateEvents == ["state: on hold", "message 3"])
    }

    @Test func retainReplacesWhatLaterSubscribersGetWithoutSendingIt() async {
        let registry = EventFanOut<String>()
        let early = registry.subscribe()
        registry.yield("state at 1", retain: true)
        registry.yield("message 2")
        registry.retain("state at 2")
        let late = registry.subscribe()
        registry.finish()
        #expect(registry.isFinished)
        var earlyEvents: [String] = []
        for await event in early { earlyEvents.append(event) }
        var lateEvents: [String] = []
        for await event in late { lateEvents.append(event) }
        #expect(earlyEvents == ["state at 1", "message 2"])
        #expect(lateEvents == ["state at 2"])
    }

    @Test func aSubscriberAfterFinishGetsNothingNotEvenTheRetainedEvent() async {
        let registry = EventFanOut<String>()
        registry.yield("state: ended", retain: true)
        registry.finish()
        var events: [String] = []
        for await event in registry.subscribe() { events.append(event) }
        #expect(events.isEmpty)
        #expect(registry.count == 0)
    }
}

/// Subscribers joining while events go out, each with the state as of it retained in the same step: whenever one
/// joins, it starts from a state and continues with the very next event, with no event missing between the two.
/// A race test: with the event sent and the state retained in two steps, it failed in two runs of three.
@Suite(.timeLimit(.minutes(5)))
struct SubscriberRegistryJoiningMidStreamTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func aSubscriberJoiningMidStreamStartsFromAStateWithNoGapAfterIt(seed: UInt64) async {
        let registry = EventFanOut<Int>()  // n > 0: event n; n < 0: the state as of event -n
        let events = 2_000
        registry.yield(0, retain: true)
        let joiners = (0 ..< 40).map { index in
            Task { () -> [Int] in
                var random = SplitMix64(seed: seed &* 1_000 &+ UInt64(index))
                for _ in 0 ..< Int.random(in: 0 ..< 400, using: &random) { await Task.yield() }
                var received: [Int] = []
                for await event in registry.subscribe() { received.append(event) }
                return received
            }
        }
        let producer = Task {
            for event in 1 ... events {
                registry.yield(event, retaining: -event)
                if event % 8 == 0 { await Task.yield() }
            }
        }
        await producer.value
        registry.finish()
        for joiner in joiners {
            let received = await joiner.value
            guard let first = received.first else { continue }
            #expect(first <= 0, "a subscriber's first event must be the retained state, got \(first)")
            let rest = Array(received.dropFirst())
            #expect(rest == Array(stride(from: -first + 1, through: events, by: 1)),
                    "after the state as of \(-first), every later event in order: got \(rest.prefix(5))…")
        }
    }
}
