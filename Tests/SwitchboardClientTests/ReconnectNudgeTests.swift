@testable import SwitchboardClient
import Testing
import TestSupport

/// Cutting a reconnection wait short, and only a wait in progress.
@Suite(.timeLimit(.minutes(5)))
struct ReconnectNudgeTests {
    let clock = ContinuousClock()

    @Test func aNudgeEndsTheWaitInProgressEvenBeforeItsContinuationIsStored() async {
        for _ in 0 ..< 20 {
            let nudge = ReconnectNudge()
            let start = clock.now
            let waiting = Task { await nudge.wait(.seconds(30)) }
            await waitUntil { nudge.isWaiting } // as early as possible: the nudge may beat the waiting child task
            nudge.nudge()
            await waiting.value
            #expect(clock.now - start < .seconds(10))
        }
    }

    @Test func withoutANudgeTheWaitLastsItsDelay() async {
        let nudge = ReconnectNudge()
        let start = clock.now
        await nudge.wait(.milliseconds(200))
        #expect(clock.now - start >= .milliseconds(200))
        #expect(!nudge.isWaiting)
        // Twice in a row: a finished wait leaves nothing behind that would cut the next one short.
        let again = clock.now
        await nudge.wait(.milliseconds(200))
        #expect(clock.now - again >= .milliseconds(200))
    }

    @Test func aNudgeWhileNothingWaitsDoesNotShortenTheNextWait() async {
        let nudge = ReconnectNudge()
        nudge.nudge()
        let start = clock.now
        await nudge.wait(.milliseconds(200))
        #expect(clock.now - start >= .milliseconds(200))
    }

    @Test func cancellationEndsTheWait() async {
        let nudge = ReconnectNudge()
        let start = clock.now
        let waiting = Task { await nudge.wait(.seconds(30)) }
        await waitUntil { nudge.isWaiting }
        waiting.cancel()
        await waiting.value
        #expect(clock.now - start < .seconds(10))
    }
}
