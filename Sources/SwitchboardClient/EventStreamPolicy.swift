/// How an interaction's event connection reconnects after it drops.
///
/// The wait starts at the server's `retry:` value (``defaultReconnectDelay`` until the server sends one), doubles
/// with each consecutive attempt that delivered no event up to ``maximumReconnectDelay``, and is then stretched
/// by a random ``jitter`` so that clients dropped together do not all come back in the same instant.
public struct EventStreamPolicy: Sendable {
    /// The wait before reconnecting until the server's `retry:` field says otherwise.
    public var defaultReconnectDelay: Duration
    /// The longest wait between attempts (before jitter); a server's `Retry-After` may ask for more, up to 10 minutes.
    public var maximumReconnectDelay: Duration
    /// Up to this fraction of the wait is added at random (0 disables it).
    public var jitter: Double
    /// A connection that delivers nothing, not even the server's heartbeat, for this long is presumed dead and
    /// replaced. Keep it above the server's heartbeat interval (15 s by default); whole seconds, at least one.
    public var idleTimeout: Duration

    /// A policy.
    public init(defaultReconnectDelay: Duration = .seconds(2), maximumReconnectDelay: Duration = .seconds(30),
                jitter: Double = 0.5, idleTimeout: Duration = .seconds(45)) {
        self.defaultReconnectDelay = defaultReconnectDelay
        self.maximumReconnectDelay = maximumReconnectDelay
        self.jitter = jitter
        self.idleTimeout = idleTimeout
    }
}

/// The waits between the attempts of one event connection: pure arithmetic, so it is tested without I/O.
struct ReconnectSchedule: Sendable {
    let policy: EventStreamPolicy
    /// The server's `retry:` value, once it has sent one.
    var serverDelay: Duration?
    /// Attempts in a row that delivered no event.
    private(set) var failures = 0

    /// The longest `Retry-After` obeyed; a longer one is read as this.
    static let longestRetryAfter = Duration.seconds(600)

    init(policy: EventStreamPolicy) {
        self.policy = policy
    }

    /// The wait after an attempt ended; `delivered` says whether it delivered any event, `retryAfter` is the
    /// server's `Retry-After`, `random` a number in 0 ..< 1 that picks the jitter.
    mutating func delay(afterAttemptThatDelivered delivered: Bool, retryAfter: Duration? = nil,
                        random: Double) -> Duration {
        failures = delivered ? 0 : failures + 1
        var wait = serverDelay ?? policy.defaultReconnectDelay
        for _ in 0 ..< min(failures, 32) { wait = min(wait * 2, policy.maximumReconnectDelay) }
        wait = min(wait, policy.maximumReconnectDelay)
        wait = wait + wait * (policy.jitter * min(max(random, 0), 1))
        // The server's own Retry-After wins over the cap (within reason): coming back earlier only earns another 429.
        if let retryAfter { wait = max(wait, min(retryAfter, Self.longestRetryAfter)) }
        return wait
    }
}
