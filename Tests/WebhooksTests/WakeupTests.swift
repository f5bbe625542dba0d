import Coordination
import Testing
import TestSupport
@testable import Webhooks

/// The delivery loop's wakeup, on timers the test fires itself: a signal is kept until the wait, ends a wait in
/// progress, and a wait's timer belongs to that wait alone.
@Suite("The delivery loop's wakeup", .timeLimit(.minutes(1)))
struct WakeupTests {
    @Test func aSignalGivenBeforeTheWaitIsKept() async {
        let timers = ManualTimers()
        let wakeup = Wakeup(sleep: timers.sleep)
        wakeup.signal()
        await wakeup.wait(timeout: .seconds(30)) // returns although no timer fires
    }

    @Test func aSignalEndsAWaitInProgress() async {
        let timers = ManualTimers()
        let wakeup = Wakeup(sleep: timers.sleep)
        let waiter = Task { await wakeup.wait(timeout: .seconds(30)) }
        await waitUntil { wakeup.isWaiting }
        wakeup.signal()
        await waiter.value // returns although no timer fires
    }

    @Test func withoutASignalTheWaitLastsUntilItsTimerFires() async {
        let timers = ManualTimers()
        await Self.expectAWaitEndedOnlyByItsTimer(Wakeup(sleep: timers.sleep), timers)
    }

    @Test func aWaitEndedBySignalLeavesNothingPendingForTheNext() async {
        let timers = ManualTimers()
        let wakeup = Wakeup(sleep: timers.sleep)
        for _ in 0 ..< 20 {
            wakeup.signal()
            await wakeup.wait(timeout: .milliseconds(5)) // ends at once; its timer is cancelled
        }
        // Every earlier timer was cancelled (none is left to fire), so nothing can end the next wait but its own.
        await waitUntil { timers.started == 20 && timers.sleeping == 0 }
        await Self.expectAWaitEndedOnlyByItsTimer(wakeup, timers)
    }

    @Test func aTimeoutShorterThanTheWaitsStartStillEndsIt() async {
        let wakeup = Wakeup()
        for _ in 0 ..< 200 { await wakeup.wait(timeout: .zero) } // each returns: none hangs
    }

    /// Starts a wait, checks that it goes on while its timer has not fired, then fires it and sees the wait end.
    private static func expectAWaitEndedOnlyByItsTimer(_ wakeup: Wakeup, _ timers: ManualTimers) async {
        let ended = Gate()
        let waiter = Task {
            await wakeup.wait(timeout: .milliseconds(300))
            ended.open()
        }
        await waitUntil { wakeup.isWaiting && timers.sleeping == 1 }
        #expect(!ended.isOpen)
        await waitUntil { timers.fireAll() == 1 }
        await waiter.value
    }
}
