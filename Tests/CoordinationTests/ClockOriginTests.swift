import Coordination
import Testing

/// `ClockOrigin`: nanoseconds read from the system clock agree with `ContinuousClock`'s own instants, and converting
/// an instant to nanoseconds and back gives it again.
@Suite(.timeLimit(.minutes(1))) struct ClockOriginTests {
    @Test func aReadingNowLiesBetweenTheInstantsReadAroundIt() {
        for _ in 0 ..< 2000 {
            let before = ClockOrigin.nanoseconds(of: .now)
            let now = ClockOrigin.nanosecondsNow()
            let after = ClockOrigin.nanoseconds(of: .now)
            // The origin's two readings are taken one after the other: allow for the time between them.
            let slack: Int64 = 1_000_000
            #expect(before - slack <= now && now <= after + slack, "\(before) \(now) \(after)")
        }
    }

    @Test func readingsOnlyMoveForward() {
        var last = ClockOrigin.nanosecondsNow()
        for _ in 0 ..< 10_000 {
            let next = ClockOrigin.nanosecondsNow()
            #expect(next >= last)
            last = next
        }
    }

    @Test func anInstantRoundTripsThroughItsNanoseconds() {
        let now = ContinuousClock.now
        let instants = [now, now - .seconds(3600), now + .milliseconds(250), ClockOrigin.instant,
                        ClockOrigin.instant + .nanoseconds(1), ClockOrigin.instant - .nanoseconds(1)]
        for instant in instants {
            // The clock reads whole nanoseconds, so nothing is lost.
            #expect(ClockOrigin.instant(atNanoseconds: ClockOrigin.nanoseconds(of: instant)) == instant)
        }
    }
}
