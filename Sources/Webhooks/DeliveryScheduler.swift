/// The delivery worker's decisions as a value: when to claim and how many messages, how long a claim leases them,
/// when to wait, whether a finished attempt or a notice wakes the waiting loop, when a failed message is due again,
/// when an endpoint must be disabled, and when to stop. It performs nothing and reads no clock: every event carries
/// the instant it happened at, and ``WebhookDelivery`` carries out the actions it returns.
///
/// One loop asks it what to do next (``loopReady(at:)``) and reports how a claim went (``claimed(_:at:)``,
/// ``claimFailed(at:)``); attempts, notices and shutdown report in from other tasks. The owner serializes the calls
/// (one lock around the value); a caller must not report a claim it was not told to make.
struct DeliveryScheduler<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The settings the decisions follow.
    struct Configuration: Sendable, Equatable {
        /// Most attempts in flight at once.
        var concurrency: Int
        /// The shortest time between the starts of two claims.
        var claimInterval: Duration
        /// How long an idle loop waits before claiming again when nothing wakes it.
        var pollInterval: Duration
        /// How long a claimed message stays leased to this worker.
        var lease: Duration
        /// Seconds between attempts (see ``RetryPlan``).
        var retrySchedule: [Int]

        /// The configuration of `settings`.
        init(_ settings: WebhookSettings) {
            self.init(concurrency: settings.concurrency, claimInterval: settings.claimInterval,
                      pollInterval: settings.pollInterval, lease: settings.lease, retrySchedule: settings.retrySchedule)
        }

        init(concurrency: Int, claimInterval: Duration, pollInterval: Duration, lease: Duration, retrySchedule: [Int]) {
            self.concurrency = max(1, concurrency)
            self.claimInterval = claimInterval
            self.pollInterval = pollInterval
            self.lease = lease
            self.retrySchedule = retrySchedule
        }
    }

    /// What the claim loop does next.
    enum LoopAction: Sendable, Equatable {
        /// Claim up to `limit` due messages, each leased for `lease`; report with ``claimed(_:at:)`` or
        /// ``claimFailed(at:)``.
        case claim(limit: Int, lease: Duration)
        /// Sleep until `deadline` (claims are kept ``Configuration/claimInterval`` apart), then ask again.
        case pace(until: Instant)
        /// Wait until `deadline` or until woken, then ask again.
        case wait(until: Instant)
        /// Leave the loop: shutdown was requested (attempts in flight still finish and report).
        case stop
    }

    /// Whether a waiting loop is woken.
    enum Wake: Sendable, Equatable {
        /// Signal the loop: it claims at its next step instead of waiting out the poll.
        case wake
        /// Nothing to do.
        case none
    }

    private let configuration: Configuration
    /// The attempts started and not yet finished.
    private(set) var inFlight = 0
    /// The limit of the claim under way, if one is.
    private var claiming: Int?
    /// When the last claim started.
    private var lastClaim: Instant?
    /// Whether the last claim took as many messages as it asked for: more may be due, so a slot coming free wakes
    /// the loop instead of leaving the messages to the next poll.
    private var claimFilledSlots = false
    private var stopping = false
    /// What this worker has done since it started, for the metrics.
    private(set) var counters = DeliveryCounters()

    /// A scheduler with nothing in flight.
    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The loop is free to act at `now`: claim when slots are free and the last claim is far enough behind, else
    /// pace or wait.
    mutating func loopReady(at now: Instant) -> LoopAction {
        precondition(claiming == nil, "the loop asked for its next step during a claim")
        if stopping { return .stop }
        let free = configuration.concurrency - inFlight
        guard free > 0 else { return .wait(until: now.advanced(by: configuration.pollInterval)) }
        if let lastClaim, case let earliest = lastClaim.advanced(by: configuration.claimInterval), now < earliest {
            return .pace(until: earliest)
        }
        claiming = free
        lastClaim = now
        return .claim(limit: free, lease: configuration.lease)
    }

    /// The claim returned `count` messages at `now`; the caller starts one attempt for each before acting.
    mutating func claimed(_ count: Int, at now: Instant) -> LoopAction {
        guard let limit = claiming else { preconditionFailure("a claim was reported that was not asked for") }
        precondition(count <= limit, "a claim returned more messages than its limit")
        claiming = nil
        claimFilledSlots = count == limit
        inFlight += count
        if count == 0 { counters.emptyClaims += 1 } else { counters.claimsWithMessages += 1 }
        return stopping ? .stop : .wait(until: now.advanced(by: configuration.pollInterval))
    }

    /// The claim failed at `now` (the database unreachable, say): try again after the poll interval.
    mutating func claimFailed(at now: Instant) -> LoopAction {
        precondition(claiming != nil, "a claim failure was reported for no claim")
        claiming = nil
        return stopping ? .stop : .wait(until: now.advanced(by: configuration.pollInterval))
    }

    /// An attempt of a message (its `attempt`-th, counting this one) came to `outcome`, with the answer's
    /// `Retry-After` seconds if any; `jitter` in -1…1 spreads retries. Returns what becomes of the message and
    /// whether its endpoint may have to be disabled.
    mutating func attemptAnswered(_ outcome: AttemptResult.Outcome, attempt: Int, retryAfter: Int?,
                                  jitter: Double) -> AttemptPlan {
        counters.attempts[outcome, default: 0] += 1
        if outcome == .delivered { return AttemptPlan(disposition: .delivered, disable: nil) }
        let retryIn = RetryPlan.delay(afterAttempts: attempt, schedule: configuration.retrySchedule,
                                      retryAfter: retryAfter, jitter: jitter)
        let disposition: AttemptPlan.Disposition = retryIn.map { .pending(retryIn: $0) } ?? .failed
        let disable: AttemptPlan.DisableCheck? = outcome == .gone ? .gone : retryIn == nil ? .scheduleExhausted : nil
        return AttemptPlan(disposition: disposition, disable: disable)
    }

    /// An attempt is done with (recorded, or not recordable): its slot is free.
    mutating func attemptFinished() -> Wake {
        precondition(inFlight > 0, "an attempt finished that was never started")
        inFlight -= 1
        return claimFilledSlots && !stopping ? .wake : .none
    }

    /// Messages may have become due: a notice of new messages, a lost listener connection, or a recorded attempt
    /// that let a waiting message through.
    mutating func messagesMayBeDue() -> Wake {
        stopping ? .none : .wake
    }

    /// Graceful shutdown: claim nothing more; the loop stops at its next step.
    mutating func shutdownRequested() -> Wake {
        stopping = true
        return .wake
    }
}
