import Coordination
import Testing
import TestSupport
@testable import Webhooks

/// The resolver threads run every job given them, on at most `limit` threads, and end once stopped.
@Suite(.timeLimit(.minutes(5)))
struct ResolverThreadsTests {
    @Test func everyJobRunsAndStopEndsEveryThread() async {
        let threads = ResolverThreads(limit: 3)
        let ran = Locked(0)
        for _ in 0 ..< 30 {
            threads.run { ran.withLock { $0 += 1 } }
        }
        await waitUntil { ran.withLock { $0 } == 30 }
        #expect(threads.threadCount >= 1 && threads.threadCount <= 3)
        threads.stop()
        await waitUntil { threads.threadCount == 0 }
    }
}
