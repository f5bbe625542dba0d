/// How an interaction's event connection reconnects after it drops.
///
/// The wait starts at the server's `retry:` value (``defaultReconnectDelay`` until the server sends one), doubles
/// with each consecutive attempt that delivered no event up to ``maximumReconnectDelay``, and is then stretched
/// by a random ``jitter`` so that clients dropped together do not all come back in the same instant.
public struct EventStreamPolicy: Sendable {
    /// The wait before reconnecting until the server's `retry:` field says otherwise.
    public var defaultReconnectDelay: Duration
    /// The longest wait between attempts, also bounding a `Retry-After`.
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
        if let retryAfter { wait = max(wait, retryAfter) }
        wait = min(wait, policy.maximumReconnectDelay)
        return wait + wait * (policy.jitter * min(max(random, 0), 1))
    }
}
