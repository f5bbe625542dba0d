import TestSupport
import Testing
@testable import HTTPServer

/// The disconnect monitor's queue of suspended requests: each request comes out once, oldest first, only when it
/// arrived before the cutoff; a request appended out of order waits for the next pass instead of being skipped.
@Suite(.timeLimit(.minutes(5)))
struct SuspensionQueueTests {
    let origin = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { origin + .milliseconds(milliseconds) }

    @Test func requestsComeOutOnceWhenOldEnoughInArrivalOrder() {
        var queue = SuspensionQueue()
        for entry in [(id: UInt64(1), since: at(0)), (id: 2, since: at(10)), (id: 3, since: at(20))] { queue.append(entry) }
        #expect(queue.takeArrived(before: at(0)).isEmpty)
        #expect(queue.takeArrived(before: at(15)) == [1, 2])
        #expect(queue.takeArrived(before: at(15)).isEmpty)
        queue.append((id: 4, since: at(30)))
        #expect(queue.takeArrived(before: at(100)) == [3, 4])
        #expect(queue.count == 0)
    }

    @Test func aRequestAppendedOutOfOrderWaitsForTheNextPass() {
        var queue = SuspensionQueue()
        queue.append((id: 1, since: at(50)))
        queue.append((id: 2, since: at(10)))
        #expect(queue.takeArrived(before: at(40)).isEmpty)
        #expect(queue.takeArrived(before: at(60)) == [1, 2])
    }

    /// Seeded model: random arrivals (slightly out of order, as two threads append) and passes; every id comes out
    /// exactly once, in arrival order, never before its cutoff, and a pass stops only at a request not yet old enough.
    @Test(arguments: [UInt64(3), 17, 41])
    func everyRequestIsTakenExactlyOnceAndNeverEarly(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var queue = SuspensionQueue()
        var appended: [SuspensionQueue.Entry] = []
        var taken: [UInt64] = []
        var arrivedAt: [UInt64: ContinuousClock.Instant] = [:]
        var clock = 0
        var nextID: UInt64 = 0
        for _ in 0 ..< 2_000 {
            clock += Int.random(in: 0 ... 3, using: &random)
            let batch = (0 ..< Int.random(in: 0 ... 20, using: &random)).map { _ -> SuspensionQueue.Entry in
                nextID += 1
                return (id: nextID, since: at(clock - Int.random(in: 0 ... 2, using: &random)))
            }
            for entry in batch { queue.append(entry) }
            appended += batch
            for entry in batch { arrivedAt[entry.id] = entry.since }
            let cutoff = at(clock - 50)
            let out = queue.takeArrived(before: cutoff)
            #expect(out.allSatisfy { arrivedAt[$0]! < cutoff }, "seed \(seed)")
            taken += out
            #expect(queue.count == appended.count - taken.count)
            if taken.count < appended.count { #expect(appended[taken.count].since >= cutoff, "seed \(seed)") }
        }
        _ = queue.takeArrived(before: at(clock + 1_000)).map { taken.append($0) }
        #expect(taken == appended.map(\.id), "seed \(seed)")
    }
}
