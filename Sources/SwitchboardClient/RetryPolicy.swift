import Foundation

/// How the client retries: network failures, and 429, 502, 503 and 504 answers (honouring `Retry-After`), with
/// capped exponential backoff. POSTs carry an `Idempotency-Key` kept across the retries, so a retry never creates
/// twice — which is also why a 502 from a proxy (a replica that closed the connection while shutting down, say)
/// is safe to retry.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The first backoff; it doubles after each attempt.
    public var initialBackoff: Duration
    /// The longest single wait, also bounding `Retry-After`.
    public var maxBackoff: Duration

    /// A policy.
    public init(maxAttempts: Int = 4, initialBackoff: Duration = .milliseconds(200), maxBackoff: Duration = .seconds(5)) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Answers worth another attempt: rate limited, or trouble between the proxy and a replica.
    static let retryableStatuses: Set<Int> = [429, 502, 503, 504]

    /// The wait before attempt `attempt` (1-based retries), or the server's `Retry-After` when given, capped.
    func backoff(retry attempt: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter { return min(retryAfter, maxBackoff) }
        var wait = initialBackoff
        for _ in 1 ..< max(1, attempt) { wait = min(wait * 2, maxBackoff) }
        return min(wait, maxBackoff)
    }
}
