import TestSupport
import Coordination
import Testing

/// Per-key fan-out: who receives what, in which order, and that every way of leaving unregisters the subscriber.
@Suite(.timeLimit(.minutes(5)))
struct SubscriberHubTests {
    @Test func subscribersOfOneKeyEachReceiveEveryEventInOrder() async {
        let hub = SubscriberHub<String, Int>()
        let readers = (0 ..< 2).map { _ in hub.subscribe("i1", bufferLimit: 16) }.map { subscription in
            Task { await collect(subscription.stream) }
        }
        #expect(hub.subscriberCount(for: "i1") == 2)

        for event in 1 ... 10 { hub.publish(event, to: "i1") }
        hub.finish("i1")

        for reader in readers { #expect(await reader.value == Array(1 ... 10)) }
    }

    /// A heartbeat to one slice reaches exactly the subscribers (of every key) in that slice; over all the slices,
    /// every subscriber gets exactly one.
    @Test func aSlicedPublishReachesItsSliceAndAllSlicesReachEveryoneOnce() async {
        let hub = SubscriberHub<String, Int>()
        let schedule = HeartbeatSchedule(interval: .seconds(4))
        let subscriptions = (0 ..< 30).map { n in hub.subscribe(n % 3 == 0 ? "a" : "b", bufferLimit: 8) }
        for slice in 0 ..< schedule.slices { hub.publishToAll(slice, slice: slice, of: schedule) }
        hub.finishAll()
        for subscription in subscriptions {
            let got = await collect(subscription.stream)
            #expect(got == [Int(subscription.id % UInt64(schedule.slices))], "subscriber \(subscription.id)")
        }
    }

    @Test func aSubscriberOfAnotherKeyReceivesNothing() async {
        let hub = SubscriberHub<String, Int>()
        let first = hub.subscribe("i1", bufferLimit: 4)
        let other = hub.subscribe("i2", bufferLimit: 4)
        #expect(hub.subscriberCount == 2)
        #expect(hub.subscriberCount(for: "i1") == 1)
        #expect(hub.subscriberCount(for: "i3") == 0)

        hub.publish(1, to: "i1")
        hub.publish(2, to: "i3")
        hub.finish("i1")
        hub.finish("i2")

        #expect(await collect(first.stream) == [1])
        #expect(await collect(other.stream) == [])
    }

    @Test func cancellingOneConsumerEndsOnlyItsStream() async {
        let hub = SubscriberHub<String, Int>()
        let cancelled = hub.subscribe("i1", bufferLimit: 8)
        let staying = hub.subscribe("i1", bufferLimit: 8)
        let received = Tally()
        let cancelledReader = Task {
            var events: [Int] = []
            for await event in cancelled.stream {
                events.append(event)
                received.increment()
            }
            return events
        }
        let stayingReader = Task { await collect(staying.stream) }

        hub.publish(1, to: "i1")
        await received.reached(1)
        cancelledReader.cancel()
        #expect(await cancelledReader.value == [1])
        await waitUntil { hub.subscriberCount(for: "i1") == 1 }

        hub.publish(2, to: "i1")
        hub.finish("i1")
        #expect(await stayingReader.value == [1, 2])
        #expect(received.count == 1)
    }

    @Test func finishingAKeyEndsAllItsStreams() async {
        let hub = SubscriberHub<String, Int>()
        let readers = (0 ..< 5).map { _ in hub.subscribe("i1", bufferLimit: 4) }.map { subscription in
            Task { await collect(subscription.stream) }
        }
        let bystander = hub.subscribe("i2", bufferLimit: 4)

        hub.publish(1, to: "i1")
        hub.finish("i1")

        #expect(hub.subscriberCount(for: "i1") == 0)
        #expect(hub.subscriberCount == 1)
        for reader in readers { #expect(await reader.value == [1]) }
        hub.finish("i2")
        #expect(await collect(bystander.stream) == [])
    }

    @Test func aSubscriberThatFallsBehindIsFinishedAfterReadingWhatItBuffered() async {
        let hub = SubscriberHub<String, Int>()
        let slow = hub.subscribe("i1", bufferLimit: 4)  // never reads until the end
        let reading = hub.subscribe("i1", bufferLimit: 4)
        let read = Tally()
        let reader = Task {
            var events: [Int] = []
            for await event in reading.stream {
                events.append(event)
                read.increment()
            }
            return events
        }

        for event in 1 ... 10 {
            hub.publish(event, to: "i1")
            #expect(hub.subscriberCount(for: "i1") == (event <= 4 ? 2 : 1), "after publishing \(event)")
            await read.reached(event)
        }
        hub.finish("i1")

        #expect(await reader.value == Array(1 ... 10))
        #expect(await collect(slow.stream) == [1, 2, 3, 4])  // no gap: the client resumes after 4
    }

    @Test(.timeLimit(.minutes(1)))
    func tenThousandSubscribersOfOneKeyAllReceiveAnEvent() async {
        let hub = SubscriberHub<String, Int>()
        let subscriptions = (0 ..< 10_000).map { _ in hub.subscribe("popular", bufferLimit: 4) }
        #expect(hub.subscriberCount == 10_000)

        let received = await withTaskGroup(of: [Int].self) { group in
            for subscription in subscriptions {
                group.addTask { await collect(subscription.stream) }
            }
            hub.publish(7, to: "popular")
            hub.finish("popular")
            return await group.reduce(into: [[Int]]()) { $0.append($1) }
        }

        #expect(received.count == 10_000)
        #expect(received.allSatisfy { $0 == [7] })
        #expect(hub.subscriberCount == 0)
    }

    @Test func droppingASubscriptionWithoutReadingUnregistersIt() async {
        let hub = SubscriberHub<String, Int>()
        _ = hub.subscribe("i1", bufferLimit: 2)
        await waitUntil { hub.subscriberCount == 0 }
        hub.publish(1, to: "i1")  // nobody to deliver to
    }

    /// A subscription's stream is made only when asked for: dropped with an event waiting and its stream never made, a
    /// subscription is forgotten all the same; so is one whose stream was made and read from, once it and its stream's
    /// reader are gone.
    @Test func aSubscriptionIsForgottenWhenDroppedWhetherItsStreamWasMadeOrNot() async {
        let hub = SubscriberHub<String, Int>()
        do {
            let unread = hub.subscribe("i1", bufferLimit: 2)
            hub.publish(1, to: "i1")
            #expect(hub.isSubscribed(unread.id, to: "i1"))
        }
        await waitUntil { hub.subscriberCount == 0 }
        do {
            let read = hub.subscribe("i1", bufferLimit: 4)
            hub.publish(2, to: "i1")
            hub.publish(3, to: "i1")
            var iterator = read.stream.makeAsyncIterator()
            #expect(await iterator.next() == 2)
            #expect(await iterator.next() == 3)
            #expect(hub.isSubscribed(read.id, to: "i1"))
        }
        await waitUntil { hub.subscriberCount == 0 }
    }

    @Test func finishAllEndsEveryStreamAndTurnsLaterSubscribersAway() async {
        let hub = SubscriberHub<String, Int>()
        let first = hub.subscribe("i1", bufferLimit: 2)
        let second = hub.subscribe("i2", bufferLimit: 2)
        hub.publish(1, to: "i2")

        hub.finishAll()

        #expect(hub.subscriberCount == 0)
        #expect(await collect(first.stream) == [])
        #expect(await collect(second.stream) == [1])
        let late = hub.subscribe("i1", bufferLimit: 2)
        #expect(hub.subscriberCount == 0)
        #expect(await collect(late.stream) == [])
    }

    @Test func releasingTheHubEndsItsStreams() async {
        var hub: SubscriberHub<String, Int>? = SubscriberHub()
        let subscription = hub!.subscribe("i1", bufferLimit: 2)
        hub!.publish(1, to: "i1")
        hub = nil
        #expect(await collect(subscription.stream) == [1])
    }
}

/// Random interleavings of one publisher per key with subscribers joining, reading slowly or quickly, falling
/// behind, stopping, being cancelled or dropped, and keys being finished.
///
/// What must hold on every run: nothing hangs or crashes, every subscriber receives only its key's events and an
/// unbroken run of them (a stream ends rather than skip one), and the count returns to 0 once everyone has left.
@Suite(.timeLimit(.minutes(5)))
struct SubscriberHubStressTests {
    /// How one reader behaves.
    struct Plan: Sendable {
        var key: Int
        var bufferLimit: Int
        var stopAfter: Int?
        var yieldsPerEvent: Int
    }

    static let eventsPerKey = 3_000

    @Test(.timeLimit(.minutes(2)), arguments: [UInt64(1), 2, 3])
    func everySubscriberSeesAnUnbrokenRunAndEveryoneLeaves(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let hub = SubscriberHub<Int, Int>()
        let broken = Tally(), received = Tally()
        let publishers = (0 ..< 4).map { key in
            Task {
                for sequence in 0 ..< Self.eventsPerKey {
                    hub.publish(key * 1_000_000 + sequence, to: key)
                    if sequence % 16 == 0 { await Task.yield() }
                }
            }
        }

        var readers: [Task<Void, Never>] = []
        for step in 0 ..< 3_000 {
            let key = Int.random(in: 0 ..< 4, using: &random)
            switch Int.random(in: 0 ..< 100, using: &random) {
            case 0 ..< 70:
                let plan = Plan(
                    key: key, bufferLimit: Int.random(in: 1 ... 8, using: &random),
                    stopAfter: Bool.random(using: &random) ? Int.random(in: 1 ... 40, using: &random) : nil,
                    yieldsPerEvent: Bool.random(using: &random) ? 0 : Int.random(in: 1 ... 50, using: &random))
                let subscription = hub.subscribe(key, bufferLimit: plan.bufferLimit)
                readers.append(Task {
                    await Self.read(subscription, plan, broken: broken, received: received)
                })
            case 70 ..< 80:
                _ = hub.subscribe(key, bufferLimit: 1)
            case 80 ..< 95:
                if !readers.isEmpty { readers[Int.random(in: 0 ..< readers.count, using: &random)].cancel() }
            default:
                hub.finish(key)
            }
            if step % 8 == 0 { await Task.yield() }
        }

        for publisher in publishers { await publisher.value }
        for reader in readers { reader.cancel() }
        for reader in readers { await reader.value }
        await waitUntil { hub.subscriberCount == 0 }
        hub.finishAll()
        #expect(broken.count == 0)
        #expect(received.count > 0)
    }

    private static func read(
        _ subscription: SubscriberHub<Int, Int>.Subscription, _ plan: Plan,
        broken: Tally, received: Tally
    ) async {
        var previous: Int?
        var count = 0
        for await event in subscription.stream {
            let (key, sequence) = event.quotientAndRemainder(dividingBy: 1_000_000)
            if key != plan.key || previous.map({ sequence != $0 + 1 }) == true { broken.increment() }
            previous = sequence
            count += 1
            received.increment()
            if count == plan.stopAfter { return }
            for _ in 0 ..< plan.yieldsPerEvent { await Task.yield() }
        }
    }
}

/// Every event the stream delivers until it ends.
private func collect<Event>(_ stream: AsyncStream<Event>) async -> [Event] {
    var events: [Event] = []
    for await event in stream { events.append(event) }
    return events
}
