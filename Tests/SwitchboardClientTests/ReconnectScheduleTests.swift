@testable import SwitchboardClient
import Testing

/// The waits between event-connection attempts: `retry:`, backoff, its cap, `Retry-After` and jitter.
struct ReconnectScheduleTests {
    let noJitter = EventStreamPolicy(defaultReconnectDelay: .seconds(2), maximumReconnectDelay: .seconds(30), jitter: 0)

    @Test func aDroppedConnectionThatDeliveredWaitsTheServersRetryEachTime() {
        var schedule = ReconnectSchedule(policy: noJitter)
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0) == .seconds(2))
        schedule.serverDelay = .milliseconds(250)
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0) == .milliseconds(250))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0) == .milliseconds(250))
    }

    @Test func failedAttemptsInARowDoubleTheWaitUpToTheCapAndADeliveryResetsIt() {
        var schedule = ReconnectSchedule(policy: noJitter)
        schedule.serverDelay = .seconds(1)
        let waits = (0 ..< 7).map { _ in schedule.delay(afterAttemptThatDelivered: false, random: 0) }
        #expect(waits == [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30), .seconds(30)])
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0) == .seconds(1))
        #expect(schedule.delay(afterAttemptThatDelivered: false, random: 0) == .seconds(2))
    }

    @Test func retryAfterLengthensTheWaitButNeverPastTheCap() {
        var schedule = ReconnectSchedule(policy: noJitter)
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(10), random: 0) == .seconds(10))
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(1), random: 0) == .seconds(8))
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(600), random: 0) == .seconds(30))
    }

    @Test func jitterOnlyLengthensTheWaitByAtMostItsFraction() {
        var schedule = ReconnectSchedule(policy: EventStreamPolicy(defaultReconnectDelay: .seconds(2), jitter: 0.5))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0) == .seconds(2))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0.5) == .milliseconds(2500))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0.999) < .seconds(3))
    }
}
