import Testing
@testable import Webhooks

@Suite("The delivery loop's wakeup")
struct WakeupTests {
    @Test func aSignalGivenBeforeTheWaitIsKept() async {
        let wakeup = Wakeup()
        wakeup.signal()
        let started = ContinuousClock.now
        await wakeup.wait(timeout: .seconds(30))
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func aSignalEndsAWaitInProgress() async {
        let wakeup = Wakeup()
        let waiter = Task { await wakeup.wait(timeout: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(50))
        wakeup.signal()
        let started = ContinuousClock.now
        await waiter.value
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func withoutASignalTheWaitLastsItsTimeout() async {
        let wakeup = Wakeup()
        let started = ContinuousClock.now
        await wakeup.wait(timeout: .milliseconds(200))
        #expect(ContinuousClock.now - started >= .milliseconds(200))
    }

    @Test func aWaitEndedBySignalLeavesNothingPendingForTheNext() async {
        let wakeup = Wakeup()
        for _ in 0 ..< 20 {
            wakeup.signal()
            await wakeup.wait(timeout: .milliseconds(5)) // ends at once; its timer is cancelled
        }
        try? await Task.sleep(for: .milliseconds(50)) // the cancelled timers have run out by now
        // Nothing was signalled since: this wait runs to its timeout.
        let started = ContinuousClock.now
        await wakeup.wait(timeout: .milliseconds(300))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
    }

    @Test func aTimeoutShorterThanTheWaitsStartStillEndsIt() async {
        let wakeup = Wakeup()
        for _ in 0 ..< 200 { await wakeup.wait(timeout: .zero) } // each returns: none hangs
    }
}
