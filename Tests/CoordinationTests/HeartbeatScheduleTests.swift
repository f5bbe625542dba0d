import Coordination
import Testing

/// Heartbeats go to one slice of the subscribers per tick: every subscriber still gets one each interval, and no
/// tick writes to all of them.
@Suite(.timeLimit(.minutes(5)))
struct HeartbeatScheduleTests {
    @Test func aTickASecondAndNoMoreSlicesThanAllowed() {
        #expect(HeartbeatSchedule(interval: .seconds(15)) == HeartbeatSchedule(interval: .seconds(15), maxSlices: 15))
        let fifteen = HeartbeatSchedule(interval: .seconds(15))
        #expect(fifteen.slices == 15 && fifteen.tick == .seconds(1))
        let two = HeartbeatSchedule(interval: .seconds(2))
        #expect(two.slices == 2 && two.tick == .seconds(1))
        let long = HeartbeatSchedule(interval: .seconds(60))
        #expect(long.slices == 15 && long.tick == .seconds(4))
        for short in [Duration.seconds(1), .milliseconds(1_500), .milliseconds(200)] {
            let schedule = HeartbeatSchedule(interval: short)
            #expect(schedule.slices == 1 && schedule.tick == short)
        }
    }

    /// Any `slices` consecutive ticks, from any starting tick, visit every subscriber exactly once, so the time
    /// between two heartbeats of one subscriber is exactly the interval.
    @Test(arguments: [1, 2, 7, 15, 60])
    func everySubscriberIsVisitedOncePerInterval(seconds: Int) {
        let schedule = HeartbeatSchedule(interval: .seconds(seconds))
        for start in [UInt64(0), 5, 1_000_003] {
            for id in UInt64(0) ..< 200 {
                let visits = (start ..< start + UInt64(schedule.slices)).filter { tick in
                    schedule.contains(id, slice: schedule.slice(atTick: tick))
                }
                #expect(visits.count == 1, "interval \(seconds) s, id \(id), from tick \(start)")
            }
        }
    }
}
