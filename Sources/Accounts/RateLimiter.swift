import Coordination

/// Token buckets per principal: `perMinute` requests a minute, refilled continuously, bursting up to `perMinute`.
///
/// Limits are per process: behind a load balancer with N replicas a client may get up to N times the rate.
public final class RateLimiter: Sendable {
    /// The outcome for one request.
    public struct Decision: Sendable, Equatable {
        /// Whether the request may proceed.
        public let allowed: Bool
        /// Whole requests left in the bucket after this one.
        public let remaining: Int
        /// Seconds until the bucket is full again.
        public let resetSeconds: Int
        /// Seconds until one request is allowed again (0 when allowed).
        public let retryAfterSeconds: Int
    }

    /// Requests allowed per minute.
    public let perMinute: Int
    private static let shardCount = 16
    /// Each guards its share of the buckets: identity → (tokens, last refill in seconds).
    private let shards: [Locked<[String: (tokens: Double, at: Double)]>]

    /// A limiter of `perMinute` requests a minute per identity.
    public init(perMinute: Int) {
        precondition(perMinute > 0)
        self.perMinute = perMinute
        shards = (0 ..< RateLimiter.shardCount).map { _ in Locked([:]) }
    }

    /// Takes one token for `identity` at time `now` (seconds on a monotonic clock).
    public func take(_ identity: String, now: Double = RateLimiter.now()) -> Decision {
        let capacity = Double(perMinute)
        let rate = capacity / 60
        let shard = shards[abs(identity.hashValue % RateLimiter.shardCount)]
        return shard.withLock { buckets in
            var bucket = buckets[identity] ?? (tokens: capacity, at: now)
            bucket.tokens = min(capacity, bucket.tokens + (now - bucket.at) * rate)
            bucket.at = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if buckets.count > 100_000 { buckets = buckets.filter { now - $0.value.at < 60 } }
            buckets[identity] = bucket
            let reset = Int(((capacity - bucket.tokens) / rate).rounded(.up))
            let retry = allowed ? 0 : max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
            return Decision(allowed: allowed, remaining: Int(bucket.tokens), resetSeconds: reset, retryAfterSeconds: retry)
        }
    }

    /// Seconds on the monotonic clock.
    public static func now() -> Double {
        let elapsed = ContinuousClock.now - ContinuousClock.Instant.zeroReference
        return elapsed.inSeconds
    }

    /// The `RateLimit-Policy` header value (IETF draft-ietf-httpapi-ratelimit-headers-08).
    public var policyHeader: String { #""default";q=\#(perMinute);w=60"# }

    /// The `RateLimit` header value for a decision.
    public func header(for decision: Decision) -> String {
        #""default";r=\#(decision.remaining);t=\#(decision.resetSeconds)"#
    }
}

extension ContinuousClock.Instant {
    /// A fixed origin for converting instants to seconds.
    static let zeroReference = ContinuousClock.now
}
