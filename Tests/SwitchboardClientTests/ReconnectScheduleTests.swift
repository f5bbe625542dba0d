import Foundation
@testable import SwitchboardClient
import Testing

/// The waits between event-connection attempts: `retry:`, backoff, its cap, `Retry-After` and jitter.
@Suite(.timeLimit(.minutes(5)))
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

    @Test func retryAfterLengthensTheWaitEvenPastTheBackoffCapUpToTenMinutes() {
        var schedule = ReconnectSchedule(policy: noJitter)
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(10), random: 0) == .seconds(10))
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(1), random: 0) == .seconds(8))
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(120), random: 0) == .seconds(120))
        #expect(schedule.delay(afterAttemptThatDelivered: false, retryAfter: .seconds(86_400), random: 0) == .seconds(600))
    }

    @Test func retryAfterIsReadAsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_796_048_401) // Mon, 30 Nov 2026 14:20:01 GMT
        #expect(RetryAfter.delay("120", now: now) == .seconds(120))
        #expect(RetryAfter.delay(" 0 ", now: now) == .zero)
        #expect(RetryAfter.delay("Mon, 30 Nov 2026 14:21:31 GMT", now: now) == .seconds(90))
        #expect(RetryAfter.delay("Mon, 30 Nov 2026 14:00:00 GMT", now: now) == .zero, "a date in the past: at once")
        #expect(RetryAfter.delay("-5", now: now) == nil)
        #expect(RetryAfter.delay("soon", now: now) == nil)
        #expect(RetryAfter.delay(nil, now: now) == nil)
    }

    @Test func jitterOnlyLengthensTheWaitByAtMostItsFraction() {
        var schedule = ReconnectSchedule(policy: EventStreamPolicy(defaultReconnectDelay: .seconds(2), jitter: 0.5))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0) == .seconds(2))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0.5) == .milliseconds(2500))
        #expect(schedule.delay(afterAttemptThatDelivered: true, random: 0.999) < .seconds(3))
    }
}
