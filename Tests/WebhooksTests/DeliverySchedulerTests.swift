import TestSupport
import Testing
@testable import Webhooks

/// An instant the tests set by hand: the scheduler reads no clock.
struct TestInstant: InstantProtocol {
    var offset: Duration

    static func at(_ milliseconds: Int) -> TestInstant { TestInstant(offset: .milliseconds(milliseconds)) }
    func advanced(by duration: Duration) -> TestInstant { TestInstant(offset: offset + duration) }
    func duration(to other: TestInstant) -> Duration { other.offset - offset }
    static func < (lhs: TestInstant, rhs: TestInstant) -> Bool { lhs.offset < rhs.offset }
}

@Suite("The delivery scheduler: claims, slots, pacing, retries, disabling and shutdown, with no I/O", .timeLimit(.minutes(5)))
struct DeliverySchedulerTests {
    typealias Scheduler = DeliveryScheduler<TestInstant>

    static let lease = Duration.seconds(35)
    static func scheduler(concurrency: Int = 4, schedule: [Int] = [5, 300]) -> Scheduler {
        Scheduler(configuration: .init(concurrency: concurrency, claimInterval: .milliseconds(20),
                                       pollInterval: .seconds(1), lease: lease, retrySchedule: schedule))
    }

    @Test func theFirstClaimAsksForEverySlotUnderTheLease() {
        var scheduler = Self.scheduler()
        #expect(scheduler.loopReady(at: .at(0)) == .claim(limit: 4, lease: Self.lease))
    }

    @Test func afterAClaimTheLoopWaitsForTheNextWakeupOrThePoll() {
        var scheduler = Self.scheduler()
        _ = scheduler.loopReady(at: .at(0))
        #expect(scheduler.claimed(1, at: .at(3)) == .wait(until: .at(1003)))
        #expect(scheduler.inFlight == 1)
    }

    @Test func claimsAreKeptTheClaimIntervalApart() {
        var scheduler = Self.scheduler()
        _ = scheduler.loopReady(at: .at(0))
        _ = scheduler.claimed(1, at: .at(2))
        // Woken 5 ms after the claim started: it paces until 20 ms, then claims what is free.
        #expect(scheduler.loopReady(at: .at(5)) == .pace(until: .at(20)))
        #expect(scheduler.loopReady(at: .at(20)) == .claim(limit: 3, lease: Self.lease))
    }

    @Test func noFreeSlotMeansNoClaimButAWait() {
        var scheduler = Self.scheduler(concurrency: 2)
        _ = scheduler.loopReady(at: .at(0))
        _ = scheduler.claimed(2, at: .at(1))
        #expect(scheduler.loopReady(at: .at(500)) == .wait(until: .at(1500)))
        _ = scheduler.attemptFinished()
        #expect(scheduler.loopReady(at: .at(600)) == .claim(limit: 1, lease: Self.lease))
    }

    @Test func aSlotComingFreeWakesTheLoopOnlyWhenTheLastClaimFilledEverySlot() {
        var full = Self.scheduler(concurrency: 2)
        _ = full.loopReady(at: .at(0))
        _ = full.claimed(2, at: .at(1))
        #expect(full.attemptFinished() == .wake)

        var partial = Self.scheduler(concurrency: 2)
        _ = partial.loopReady(at: .at(0))
        _ = partial.claimed(1, at: .at(1))
        #expect(partial.attemptFinished() == .none)
    }

    @Test func attemptsFinishingDuringAClaimFreeTheirSlotsForTheNext() {
        var scheduler = Self.scheduler(concurrency: 3)
        _ = scheduler.loopReady(at: .at(0))
        _ = scheduler.claimed(3, at: .at(1))
        _ = scheduler.attemptFinished()
        #expect(scheduler.loopReady(at: .at(30)) == .claim(limit: 1, lease: Self.lease))
        _ = scheduler.attemptFinished() // finishes while the claim is under way
        _ = scheduler.claimed(1, at: .at(32))
        #expect(scheduler.inFlight == 2)
        #expect(scheduler.loopReady(at: .at(60)) == .claim(limit: 1, lease: Self.lease))
    }

    @Test func claimsAreCountedByWhetherTheyFoundMessages() {
        var scheduler = Self.scheduler()
        _ = scheduler.loopReady(at: .at(0))
        _ = scheduler.claimed(0, at: .at(1))
        _ = scheduler.loopReady(at: .at(1000))
        _ = scheduler.claimed(2, at: .at(1001))
        _ = scheduler.loopReady(at: .at(2000))
        _ = scheduler.claimFailed(at: .at(2001))
        #expect(scheduler.counters.claimsWithMessages == 1)
        #expect(scheduler.counters.emptyClaims == 1)
    }

    @Test func aFailedClaimIsRetriedAfterThePollInterval() {
        var scheduler = Self.scheduler()
        _ = scheduler.loopReady(at: .at(0))
        #expect(scheduler.claimFailed(at: .at(7)) == .wait(until: .at(1007)))
        #expect(scheduler.inFlight == 0)
        #expect(scheduler.loopReady(at: .at(1007)) == .claim(limit: 4, lease: Self.lease))
    }

    @Test func attemptsAreCountedByOutcome() {
        var scheduler = Self.scheduler()
        for outcome in [AttemptResult.Outcome.delivered, .delivered, .timeout, .httpError] {
            _ = scheduler.attemptAnswered(outcome, attempt: 1, retryAfter: nil, jitter: 0)
        }
        #expect(scheduler.counters.attempts == [.delivered: 2, .timeout: 1, .httpError: 1])
    }

    @Test func aDeliveredMessageIsDone() {
        var scheduler = Self.scheduler()
        #expect(scheduler.attemptAnswered(.delivered, attempt: 3, retryAfter: 60, jitter: 1)
                == AttemptPlan(disposition: .delivered, disable: nil))
    }

    @Test func aFailedAttemptIsRetriedOnTheJitteredScheduleAndNotBeforeRetryAfter() {
        var scheduler = Self.scheduler(schedule: [5, 300])
        #expect(scheduler.attemptAnswered(.httpError, attempt: 1, retryAfter: nil, jitter: 0)
                == AttemptPlan(disposition: .pending(retryIn: 5), disable: nil))
        #expect(scheduler.attemptAnswered(.timeout, attempt: 2, retryAfter: nil, jitter: -1)
                == AttemptPlan(disposition: .pending(retryIn: 240), disable: nil))
        #expect(scheduler.attemptAnswered(.httpError, attempt: 1, retryAfter: 120, jitter: 0)
                == AttemptPlan(disposition: .pending(retryIn: 120), disable: nil))
    }

    @Test func aMessageIsGivenUpAfterItsScheduleAndItsEndpointCheckedForDisabling() {
        var scheduler = Self.scheduler(schedule: [5, 300])
        let plan = scheduler.attemptAnswered(.networkError, attempt: 3, retryAfter: nil, jitter: 0)
        #expect(plan == AttemptPlan(disposition: .failed, disable: .scheduleExhausted))
        #expect(plan.disposition.status == "failed")
        #expect(plan.disposition.retryIn == nil)
    }

    @Test func goneDisablesTheEndpointWhetherOrNotRetriesRemain() {
        var scheduler = Self.scheduler(schedule: [5, 300])
        #expect(scheduler.attemptAnswered(.gone, attempt: 1, retryAfter: nil, jitter: 0)
                == AttemptPlan(disposition: .pending(retryIn: 5), disable: .gone))
        #expect(scheduler.attemptAnswered(.gone, attempt: 3, retryAfter: nil, jitter: 0)
                == AttemptPlan(disposition: .failed, disable: .gone))
    }

    @Test func noticesWakeTheLoopUntilShutdown() {
        var scheduler = Self.scheduler()
        #expect(scheduler.messagesMayBeDue() == .wake)
        #expect(scheduler.shutdownRequested() == .wake)
        #expect(scheduler.messagesMayBeDue() == .none)
    }

    @Test func shutdownWhileWaitingStopsAtTheNextStep() {
        var scheduler = Self.scheduler()
        _ = scheduler.loopReady(at: .at(0))
        _ = scheduler.claimed(1, at: .at(1))
        _ = scheduler.shutdownRequested()
        #expect(scheduler.loopReady(at: .at(2)) == .stop)
        // The attempt in flight still finishes and reports, and wakes nothing.
        #expect(scheduler.attemptFinished() == .none)
        #expect(scheduler.inFlight == 0)
    }

    @Test func shutdownDuringAClaimStopsOnceTheClaimIsReportedWithItsMessagesInFlight() {
        var scheduler = Self.scheduler(concurrency: 2)
        _ = scheduler.loopReady(at: .at(0))
        _ = scheduler.shutdownRequested()
        #expect(scheduler.claimed(2, at: .at(5)) == .stop)
        #expect(scheduler.inFlight == 2)
        #expect(scheduler.attemptFinished() == .none)

        var failing = Self.scheduler()
        _ = failing.loopReady(at: .at(0))
        _ = failing.shutdownRequested()
        #expect(failing.claimFailed(at: .at(5)) == .stop)
    }

    @Test func shutdownBeforeTheFirstStepClaimsNothing() {
        var scheduler = Self.scheduler()
        _ = scheduler.shutdownRequested()
        #expect(scheduler.loopReady(at: .at(0)) == .stop)
        #expect(scheduler.counters == DeliveryCounters())
    }

    /// Random interleavings of every entry point (seeds printed on failure): a claim never asks for more than the
    /// free slots, claims start at least the claim interval apart, slots never go negative or past the
    /// concurrency, and after shutdown the loop's next step is to stop and nothing wakes it again.
    @Test(arguments: [1, 2, 3, 42, 1234, 99_991] as [UInt64])
    func randomInterleavingsKeepTheInvariants(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let concurrency = 3
        var scheduler = Self.scheduler(concurrency: concurrency)
        var now = 0
        var claimLimit: Int?
        var started = 0, finished = 0
        var lastClaimAt: Int?
        var stopped = false
        for _ in 0 ..< 2000 {
            now += Int.random(in: 0 ... 30, using: &random)
            switch Int.random(in: 0 ... 5, using: &random) {
            case 0 where claimLimit == nil && !stopped:
                switch scheduler.loopReady(at: .at(now)) {
                case .claim(let limit, let lease):
                    #expect(limit == concurrency - (started - finished), "seed \(seed)")
                    #expect(limit > 0 && lease == Self.lease, "seed \(seed)")
                    if let lastClaimAt { #expect(now - lastClaimAt >= 20, "seed \(seed)") }
                    lastClaimAt = now
                    claimLimit = limit
                case .pace(let until):
                    #expect(until > .at(now), "seed \(seed)")
                case .wait(let until):
                    #expect(until == .at(now + 1000), "seed \(seed)")
                case .stop:
                    stopped = true
                }
            case 1 where claimLimit != nil:
                let count = Int.random(in: 0 ... claimLimit!, using: &random)
                let action = scheduler.claimed(count, at: .at(now))
                started += count
                claimLimit = nil
                if action == .stop { stopped = true }
            case 2 where claimLimit != nil:
                if scheduler.claimFailed(at: .at(now)) == .stop { stopped = true }
                claimLimit = nil
            case 3 where started > finished:
                let wake = scheduler.attemptFinished()
                finished += 1
                if stopped { #expect(wake == .none, "seed \(seed)") }
            case 4:
                _ = scheduler.messagesMayBeDue()
            case 5 where Int.random(in: 0 ... 50, using: &random) == 0:
                #expect(scheduler.shutdownRequested() == .wake, "seed \(seed)")
                if claimLimit == nil { #expect(scheduler.loopReady(at: .at(now)) == .stop, "seed \(seed)") }
                stopped = true
            default:
                break
            }
            #expect(scheduler.inFlight == started - finished, "seed \(seed)")
            #expect((0 ... concurrency).contains(scheduler.inFlight), "seed \(seed)")
            if stopped { #expect(scheduler.messagesMayBeDue() == .none, "seed \(seed)") }
        }
    }
}
