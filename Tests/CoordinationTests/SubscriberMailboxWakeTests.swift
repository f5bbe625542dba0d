@testable import Coordination
import TestSupport
import Testing

/// A mailbox's wake-up for a consumer that reads only once there is something to read: called once, by the first
/// event or the close after it was asked for (at once when one is already there), never by a refused event, and
/// only the latest one asked for.
@Suite(.timeLimit(.minutes(2)))
struct SubscriberMailboxWakeTests {
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func seededOperationsWakeExactlyWhenAModelSaysTheyShould(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let limit = Int.random(in: 1 ... 6, using: &random)
        let mailbox = SubscriberMailbox<Int>(limit: limit) {}
        let woken = Locked<[Int]>([])
        var expected: [Int] = [], armed: Int?, queued = 0, closed = false, next = 0, wakeCalls = 0
        for step in 0 ..< 20_000 {
            switch Int.random(in: 0 ..< 100, using: &random) {
            case 0 ..< 40:
                next += 1
                let delivery = mailbox.yield(next)
                if delivery == .enqueued {
                    queued += 1
                    if let waker = armed { expected.append(waker); armed = nil }
                }
            case 40 ..< 75:
                guard queued > 0 || closed else { continue }
                _ = await mailbox.next()
                if queued > 0 { queued -= 1 }
            case 75 ..< 99:
                wakeCalls += 1
                let id = wakeCalls
                mailbox.whenReady { woken.withLock { $0.append(id) } }
                if queued > 0 || closed { expected.append(id) } else { armed = id }  // replaces an earlier one
            default:
                if Bool.random(using: &random) { mailbox.finish() } else { mailbox.cancel(); queued = 0 }
                if !closed, let waker = armed { expected.append(waker); armed = nil }
                closed = true
            }
            #expect(woken.withLock { $0 } == expected, "seed \(seed), step \(step)")
            if woken.withLock({ $0 }) != expected { return }
        }
        #expect(expected.count > 100, "the run woke too few times to tell: \(expected.count)")
    }

    @Test func aWakeUpAskedForAfterTheEventComesAtOnceAndAnIdleOneNever() {
        let mailbox = SubscriberMailbox<Int>(limit: 2) {}
        let woken = Tally()
        mailbox.whenReady { woken.increment() }
        #expect(woken.count == 0)
        _ = mailbox.yield(1)
        _ = mailbox.yield(2)
        #expect(woken.count == 1)
        mailbox.whenReady { woken.increment() }
        #expect(woken.count == 2)
        mailbox.finish()
        #expect(woken.count == 2)
    }
}
