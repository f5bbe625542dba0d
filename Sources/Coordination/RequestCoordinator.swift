/// Shares one load among concurrent callers asking for the same key, and caches what it loaded.
///
/// For work many requests want at once: a feed that many phones open together costs one query, a cold token under
/// a burst is looked up once. Callers of ``value(for:deadline:from:_:)`` for one key share a single load, whose key
/// goes to a `BatchLoader` (loads of different keys go together in batches, which report back without a task per
/// load). A successful value is cached per
/// ``CachePolicy`` until ``invalidate(_:)``, until its time to live passes, or until it is the least recently used
/// entry of a full cache; errors are never cached. Each caller can leave alone (cancellation, deadline); the load is
/// cancelled when its last caller leaves.
///
/// Freshness: a key has at most one *current* load, its generation, and only that load may fill the key's cache
/// entry. ``invalidate(_:)`` retires it: later callers start a new load, and the retired one still answers the
/// callers who joined it but can no longer fill the cache. The mistake to avoid is invalidating before the write
/// commits, or not awaiting ``invalidate(_:)`` before acknowledging the write.
public actor RequestCoordinator<Key: Hashable & Sendable, Value: Sendable> {
    @usableFromInline typealias LoadID = UInt64
    @usableFromInline typealias WaiterID = UInt64

    /// What the actor shares with threads that must not wait for it. The actor alone inserts and invalidates
    /// entries, in step with ``current``; readers only refresh recency, drop expired entries and count hits.
    @usableFromInline
    struct Shared {
        @usableFromInline var cache: LRUCache<Key, Value>
        @usableFromInline var statistics = RequestCoordinatorStatistics()
    }

    // `@usableFromInline` here and on the load state: ``cachedValue(for:)`` and ``value(for:deadline:from:_:)`` are
    // inlined into their callers, so that lookups and loads run specialised for the caller's key and value types
    // (a feed page or token is looked up on every request) rather than through generic metadata.
    @usableFromInline let policy: CachePolicy
    @usableFromInline let lifetime: (@Sendable (Value) -> Duration?)?
    @usableFromInline let now: @Sendable () -> ContinuousClock.Instant
    /// `now` as nanoseconds from `ClockOrigin`, what the cache compares expiries with: read straight from the system
    /// clock, since an instant's layout is not fixed and converting one costs more than the lookup it times.
    @usableFromInline let nowNanoseconds: @Sendable () -> Int64
    /// Guards the cache and the counters, which ``cachedValue(for:)`` and ``statistics`` read without an actor hop.
    @usableFromInline let shared: Locked<Shared>
    /// Every load someone waits for, including ones retired by invalidation.
    @usableFromInline var loads: [LoadID: Load] = [:]
    /// Each key's current generation: the load new callers join, and the only one allowed to fill the cache.
    /// Load ids grow monotonically, so a retired or finished load can never be mistaken for a newer one.
    @usableFromInline var current: [Key: LoadID] = [:]
    @usableFromInline var lastID: UInt64 = 0

    /// Creates a coordinator with an empty cache.
    ///
    /// - Parameters:
    ///   - caching: how long loaded values are kept; `.disabled` only shares loads in flight.
    ///   - lifetime: how long one value may be served from the cache, e.g. until a token expires; nil means no
    ///     limit beyond the policy's. The shorter of the two wins, and zero or less keeps the value out of the
    ///     cache. It runs on the actor for every successful load, so it must be quick.
    public init(
        caching: CachePolicy = .untilInvalidated(maxEntries: 10_000),
        lifetime: (@Sendable (Value) -> Duration?)? = nil
    ) {
        self.init(caching: caching, lifetime: lifetime, now: { ContinuousClock.now },
                  nowNanoseconds: ClockOrigin.nanosecondsNow)
    }

    /// Creates a coordinator whose cache reads the time from `now`, for tests.
    init(
        caching: CachePolicy, lifetime: (@Sendable (Value) -> Duration?)?,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.init(caching: caching, lifetime: lifetime, now: now, nowNanoseconds: { ClockOrigin.nanoseconds(of: now()) })
    }

    private init(
        caching: CachePolicy, lifetime: (@Sendable (Value) -> Duration?)?,
        now: @escaping @Sendable () -> ContinuousClock.Instant, nowNanoseconds: @escaping @Sendable () -> Int64
    ) {
        self.policy = caching
        self.lifetime = lifetime
        self.now = now
        self.nowNanoseconds = nowNanoseconds
        self.shared = Locked(Shared(cache: LRUCache(capacity: caching.maxEntries)))
    }

    /// Forgets `key`'s cached value and retires its load in flight, so later callers load afresh.
    ///
    /// Call it after the write that changed the value commits (earlier, a load may read the old row and cache it),
    /// and await it before acknowledging the write. Callers already waiting keep their load's answer.
    public func invalidate(_ key: Key) {
        current[key] = nil
        shared.withLock { $0.cache.remove(key) }
    }

    /// ``invalidate(_:)`` for every key.
    public func invalidateAll() {
        current.removeAll()
        shared.withLock { $0.cache.removeAll() }
    }

    /// Current counters, readable from any thread without waiting for the actor.
    public nonisolated var statistics: RequestCoordinatorStatistics {
        shared.withLock { shared in
            var statistics = shared.statistics
            statistics.cachedEntries = shared.cache.count
            return statistics
        }
    }
}

// In an extension: a method of the actor's body is called through its vtable from other modules, while these are
// called directly and, being inlinable, specialised for the caller's key and value types.
extension RequestCoordinator {
    /// The value for `key`: from the cache, by joining the load in flight for it, or by starting one, which asks
    /// `loader` for the key and `transform`s its answer (nil when the batch had none), with no task of its own
    /// waiting for the batch (``BatchLoader/enqueue(_:deliver:)``).
    ///
    /// Callers of one key share one load, and every caller of a key must pass an equivalent `transform`. Throws what
    /// the load threw (to every caller that shared it), `CancellationError` if this caller's task is cancelled, or
    /// ``RequestCoordinatorError/deadlineExceeded(_:)`` once `deadline` has passed; leaving early never cancels the
    /// load for the others, and when every caller leaves, the key is taken back from the loader if no batch has it
    /// yet.
    @inlinable
    public nonisolated func value<Loaded: Sendable>(
        for key: Key, deadline: Duration? = nil, from loader: BatchLoader<Key, Loaded>,
        _ transform: @escaping @Sendable (Loaded?) -> Value
    ) async throws -> Value {
        if let cached = cachedValue(for: key) { return cached }
        return try await joinOrStartLoad(for: key, deadline: deadline) { loadID in
            let request = loader.enqueue(key) { answer in await self.finish(loadID, with: answer.map(transform)) }
            return { loader.withdraw(request, key: key) }
        }
    }

    /// The cached value for `key` if there is a fresh one, without waiting: for threads that cannot suspend.
    ///
    /// Never loads; nil means "not cached now", not "does not exist". A hit counts in ``statistics``.
    @inlinable
    public nonisolated func cachedValue(for key: Key) -> Value? {
        guard policy.maxEntries > 0 else { return nil }
        let now = nowNanoseconds()
        return shared.withLock { shared in
            guard let value = shared.cache.value(for: key, nanosecondsNow: now) else { return nil }
            shared.statistics.cacheHits += 1
            return value
        }
    }
}
