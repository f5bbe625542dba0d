/// A snapshot of a ``RequestCoordinator``'s counters, for metrics.
///
/// The first three only ever grow (rates come from differences between scrapes); the last two are gauges.
public struct RequestCoordinatorStatistics: Sendable, Hashable {
    /// Loads run, counting one per shared load, however many callers it answered.
    public var loadsStarted: Int
    /// Callers who joined a load already in flight instead of starting one: the loads saved by sharing.
    public var callersJoined: Int
    /// Callers answered from the cache, including hits of the synchronous ``RequestCoordinator/cachedValue(for:)``.
    public var cacheHits: Int
    /// Loads that callers are waiting for now. A load whose waiters all left is cancelled and no longer counted,
    /// even if its loader has not noticed the cancellation yet.
    public var loadsInFlight: Int
    /// Values held in the cache, including expired ones not yet dropped (they go when next looked up or evicted).
    public var cachedEntries: Int

    /// Creates a snapshot.
    public init(loadsStarted: Int = 0, callersJoined: Int = 0, cacheHits: Int = 0, loadsInFlight: Int = 0,
                cachedEntries: Int = 0) {
        self.loadsStarted = loadsStarted
        self.callersJoined = callersJoined
        self.cacheHits = cacheHits
        self.loadsInFlight = loadsInFlight
        self.cachedEntries = cachedEntries
    }
}
