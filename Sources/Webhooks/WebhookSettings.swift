import Foundation

/// How webhooks are delivered (`WEBHOOK_*` environment variables; see `Configuration`).
public struct WebhookSettings: Sendable {
    /// Delays between attempts (`WEBHOOK_RETRY_SCHEDULE`, comma-separated seconds): the first retry waits
    /// `retrySchedule[0]`, and so on; after the last the message is given up. Jittered by ±20 %.
    public var retrySchedule: [Int]
    /// How long one attempt may take, connection included (`WEBHOOK_TIMEOUT_SECONDS`).
    public var timeout: Duration
    /// Lets deliveries and registrations reach private, loopback and link-local addresses
    /// (`WEBHOOK_ALLOW_PRIVATE_TARGETS=1`: local development, tests and on-premises setups).
    public var allowPrivateTargets: Bool
    /// Most attempts in flight in this process (`WEBHOOK_CONCURRENCY`).
    public var concurrency: Int
    /// How long a rotated-out secret keeps signing (`WEBHOOK_SECRET_OVERLAP_SECONDS`).
    public var secretOverlap: Duration
    /// How often workers look for due messages when no notice woke them.
    public var pollInterval: Duration
    /// How long delivered and given-up messages and all attempts are kept.
    public var retention: Duration
    /// The shortest time between two claims of one worker (`WEBHOOK_CLAIM_INTERVAL_MS`): under load, the messages
    /// committed meanwhile are claimed together (one statement for many), at the cost of at most this much added
    /// delay. An idle worker claims at once when a notice wakes it.
    public var claimInterval: Duration

    /// Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts over about 27.6 hours.
    public static let defaultSchedule = [5, 300, 1800, 7200, 18_000, 36_000, 36_000]

    /// Settings with the service's defaults unless given.
    public init(retrySchedule: [Int] = WebhookSettings.defaultSchedule, timeout: Duration = .seconds(15),
                allowPrivateTargets: Bool = false, concurrency: Int = 16, secretOverlap: Duration = .seconds(86_400),
                pollInterval: Duration = .seconds(1), retention: Duration = .seconds(30 * 86_400),
                claimInterval: Duration = .milliseconds(20)) {
        self.retrySchedule = retrySchedule
        self.timeout = timeout
        self.allowPrivateTargets = allowPrivateTargets
        self.concurrency = concurrency
        self.secretOverlap = secretOverlap
        self.pollInterval = pollInterval
        self.retention = retention
        self.claimInterval = claimInterval
    }

    /// How long a claim lasts before another worker may take the message over: long enough for one attempt and
    /// its bookkeeping, short enough that a crashed worker's messages wait little.
    public var lease: Duration { timeout * 2 + .seconds(5) }

    /// Parses `WEBHOOK_RETRY_SCHEDULE`; nil when it is not a non-empty list of 1 to 30 delays of 0 to 604800 seconds.
    public static func schedule(parsing text: String) -> [Int]? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let delays = parts.compactMap { Int($0) }
        guard !parts.isEmpty, parts.count <= 30, delays.count == parts.count,
              delays.allSatisfy({ (0 ... 604_800).contains($0) }) else { return nil }
        return delays
    }
}

/// When the next attempt of a message is due (a pure function, so the schedule is unit-tested).
public enum RetryPlan {
    /// Seconds until the next attempt after `attempts` failed ones, or nil when the schedule is exhausted: the
    /// schedule's delay jittered by ±20 % (`jitter` in -1…1), but never earlier than the answer's `Retry-After`
    /// (capped at one day).
    public static func delay(afterAttempts attempts: Int, schedule: [Int], retryAfter: Int?, jitter: Double) -> Double? {
        guard attempts >= 1, attempts <= schedule.count else { return nil }
        let base = Double(schedule[attempts - 1])
        let jittered = base * (1 + 0.2 * max(-1, min(1, jitter)))
        return max(jittered, Double(min(retryAfter ?? 0, 86_400)))
    }
}
