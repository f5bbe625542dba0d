import Coordination
import Testing
import TestSupport
@testable import Webhooks

/// The delivery threads run every job given them, each with a handle of its thread's, and end once stopped.
@Suite(.timeLimit(.minutes(5)))
struct DeliveryThreadsTests {
    @Test func everyJobRunsAndStopEndsEveryThread() async {
        let threads = DeliveryThreads(limit: 3)
        let ran = Locked(0)
        for _ in 0 ..< 30 {
            threads.run { handle in
                ran.withLock { $0 += handle == nil ? 0 : 1 }
            }
        }
        await waitUntil { ran.withLock { $0 } == 30 }
        #expect(threads.threadCount >= 1 && threads.threadCount <= 3)
        threads.stop()
        await waitUntil { threads.threadCount == 0 }
    }
}
