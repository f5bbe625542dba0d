import Coordination
@testable import Postgres
import Testing
import TestSupport

/// A follower's events taken in runs: all that arrived, in order, once each; a waiting follower woken by the next
/// batch; finishing and cancelling.
@Suite(.timeLimit(.minutes(5)))
struct ListenerRunsTests {
    func notice(_ payload: String) -> ListenerEvent {
        .notification(PostgresNotification(channel: "c", payload: payload, senderPID: 1))
    }

    @Test func whatArrivedTogetherIsTakenTogetherInOrder() async {
        let runs = ListenerRuns()
        runs.append([.connected, notice("a")])
        runs.append([notice("b")])
        #expect(await runs.next() == [.connected, notice("a"), notice("b")])
        runs.append([notice("c")])
        #expect(await runs.next() == [notice("c")])
    }

    @Test func aWaitingFollowerIsWokenByTheNextBatch() async {
        let runs = ListenerRuns()
        let taken = Task { await runs.next() }
        // The follower may or may not wait yet: either way it gets the batch.
        await Task.yield()
        runs.append([notice("x"), notice("y")])
        #expect(await taken.value == [notice("x"), notice("y")])
    }

    @Test func finishedRunsHandOutWhatIsLeftThenNil() async {
        let runs = ListenerRuns()
        let finished = Locked(0)
        runs.onFinish { finished.withLock { $0 += 1 } }
        runs.append([notice("a")])
        runs.finish()
        runs.finish()
        runs.append([notice("late")])  // nothing comes after the finish
        #expect(await runs.next() == [notice("a")])
        #expect(await runs.next() == nil)
        #expect(await runs.next() == nil)
        #expect(finished.withLock { $0 } == 1)
        // An action given after the finish runs at once.
        runs.onFinish { finished.withLock { $0 += 1 } }
        #expect(finished.withLock { $0 } == 2)
    }

    @Test func cancellingAWaitingFollowerFinishesTheRuns() async {
        let runs = ListenerRuns()
        let finished = Locked(false)
        runs.onFinish { finished.withLock { $0 = true } }
        let taken = Task { await runs.next() }
        taken.cancel()
        #expect(await taken.value == nil)
        #expect(finished.withLock { $0 })
        #expect(await runs.next() == nil)
    }

    /// A producer appends seeded batches while a follower takes runs at its own pace (sometimes yielding between
    /// runs): the runs put end to end are every event appended, in order, once.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func runsPutEndToEndAreEveryEventInOrder(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        var batches: [[ListenerEvent]] = []
        var count = 0
        for _ in 0..<400 {
            let size = Int.random(in: 0...5, using: &random)
            batches.append((0..<size).map { _ in count += 1; return notice("\(count)") })
        }
        let pauses = (0..<2_000).map { _ in Bool.random(using: &random) }
        let runs = ListenerRuns()
        let follower = Task { () -> ([ListenerEvent], Int) in
            var seen: [ListenerEvent] = []
            var taken = 0
            while let run = await runs.next() {
                #expect(!run.isEmpty)
                seen += run
                if pauses[taken % pauses.count] { await Task.yield() }
                taken += 1
            }
            return (seen, taken)
        }
        for (index, batch) in batches.enumerated() {
            runs.append(batch)
            if pauses[index] { await Task.yield() }
        }
        runs.finish()
        let (seen, taken) = await follower.value
        #expect(seen == batches.flatMap { $0 })
        #expect(taken >= 1 && taken <= batches.filter { !$0.isEmpty }.count)
    }
}
