@testable import Coordination
import TestSupport
import Testing

/// A subscriber's mailbox against a plain bounded queue: the same answers to the same seeded operations, a queue
/// whose storage stays bounded however far behind its reader runs, and one termination however it ends.
@Suite(.timeLimit(.minutes(2)))
struct SubscriberMailboxTests {
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func seededOperationsMatchABoundedQueue(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let terminations = Tally()
        let limit = Int.random(in: 1 ... 12, using: &random)
        let mailbox = SubscriberMailbox<Int>(limit: limit) { terminations.increment() }
        var model: [Int] = [], closed = false, next = 0
        for _ in 0 ..< 20_000 {
            switch Int.random(in: 0 ..< 100, using: &random) {
            case 0 ..< 55:
                next += 1
                let delivery = mailbox.yield(next)
                if closed {
                    #expect(delivery == .closed)
                } else if model.count >= limit {
                    #expect(delivery == .dropped)
                } else {
                    #expect(delivery == .enqueued)
                    model.append(next)
                }
            case 55 ..< 99:
                // Only when the model says something is there (or the end is), so the read never waits.
                guard !model.isEmpty || closed else { continue }
                let read = await mailbox.next()
                #expect(read == model.first, "limit \(limit)")
                if !model.isEmpty { model.removeFirst() }
            default:
                if Bool.random(using: &random) { mailbox.finish() } else { mailbox.cancel(); model = [] }
                closed = true
            }
            let stored = mailbox.state.withLock { $0.events.count }
            #expect(stored <= 2 * limit, "the queue's storage grew past twice its limit: \(stored)")
        }
        #expect(terminations.count == (closed ? 1 : 0))
    }

    @Test func aReaderAlwaysBehindKeepsTheStorageBounded() async {
        let mailbox = SubscriberMailbox<Int>(limit: 8) {}
        for event in 0 ..< 5 { _ = mailbox.yield(event) }
        for event in 5 ..< 10_000 {
            #expect(mailbox.yield(event) == .enqueued)
            #expect(await mailbox.next() == event - 5)
        }
        #expect(mailbox.state.withLock { $0.events.count } <= 16)
    }

    @Test func aWaitingReaderGetsTheNextEventThenTheEnd() async {
        let mailbox = SubscriberMailbox<Int>(limit: 2) {}
        let reader = Task { [await mailbox.next(), await mailbox.next()] }
        await waitUntil { mailbox.state.withLock { $0.reader != nil } }
        #expect(mailbox.yield(42) == .enqueued)
        await waitUntil { mailbox.state.withLock { $0.reader != nil } }
        mailbox.finish()
        #expect(await reader.value == [42, nil])
    }

    @Test func finishingKeepsWhatIsQueuedAndCancellingDropsIt() async {
        let finished = SubscriberMailbox<Int>(limit: 4) {}
        _ = finished.yield(1)
        _ = finished.yield(2)
        finished.finish()
        #expect(finished.yield(3) == .closed)
        #expect(await finished.next() == 1)
        #expect(await finished.next() == 2)
        #expect(await finished.next() == nil)

        let cancelled = SubscriberMailbox<Int>(limit: 4) {}
        _ = cancelled.yield(1)
        cancelled.cancel()
        #expect(await cancelled.next() == nil)
    }

    @Test func terminationRunsOnceWhicheverWayItEnds() async {
        let terminations = Tally()
        var mailbox: SubscriberMailbox<Int>? = SubscriberMailbox(limit: 1) { terminations.increment() }
        var reader: SubscriberMailboxReader<Int>? = SubscriberMailboxReader(mailbox!)
        mailbox!.finish()
        mailbox!.cancel()
        mailbox!.finish()
        reader = nil  // its release cancels the mailbox once more
        #expect(reader == nil)
        mailbox = nil
        #expect(terminations.count == 1)
    }
}
