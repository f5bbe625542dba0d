import Coordination
import Testing

/// `ClockOrigin`: offsets read from the system clock agree with `ContinuousClock`'s own instants, and converting an
/// instant to an offset and back gives the same instant.
@Suite(.timeLimit(.minutes(1))) struct ClockOriginTests {
    @Test func anOffsetReadNowLiesBetweenTheInstantsReadAroundIt() {
        for _ in 0 ..< 2000 {
            let before = ClockOrigin.offset(of: .now)
            let now = ClockOrigin.offsetNow()
            let after = ClockOrigin.offset(of: .now)
            // The origin's two readings are taken one after the other: allow for the time between them.
            let slack = Duration.milliseconds(1)
            #expect(before - slack <= now && now <= after + slack, "\(before) \(now) \(after)")
        }
    }

    @Test func offsetsOnlyMoveForward() {
        var last = ClockOrigin.offsetNow()
        for _ in 0 ..< 10_000 {
            let next = ClockOrigin.offsetNow()
            #expect(next >= last)
            last = next
        }
    }

    @Test func anInstantRoundTripsThroughItsOffset() {
        let instants = [ContinuousClock.now, .now - .seconds(3600), .now + .milliseconds(250), ClockOrigin.instant]
        for instant in instants {
            #expect(ClockOrigin.instant(at: ClockOrigin.offset(of: instant)) == instant)
        }
    }
}
