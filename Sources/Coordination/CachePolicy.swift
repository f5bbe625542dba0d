/// How long a ``RequestCoordinator`` keeps the values it loaded.
///
/// Caching is only safe where every write that changes a value calls ``RequestCoordinator/invalidate(_:)`` once it
/// has committed; otherwise use ``disabled`` (loads are still shared) or a short ``timeToLive(_:maxEntries:)``.
public enum CachePolicy: Sendable, Hashable {
    /// Nothing is kept: the coordinator only shares a load among callers who ask while it is in flight.
    case disabled
    /// A value is kept until it is invalidated, or until the cache is full and it is the least recently used entry.
    ///
    /// `maxEntries` bounds memory, not staleness; zero or less keeps nothing.
    case untilInvalidated(maxEntries: Int)
    /// As ``untilInvalidated(maxEntries:)``, and a value is also dropped once `timeToLive` has passed since it was
    /// cached. The time counts from when the load finished, not from when it started.
    case timeToLive(Duration, maxEntries: Int)

    /// How many values the cache holds at most; zero when caching is off.
    @inlinable
    var maxEntries: Int {
        switch self {
        case .disabled: 0
        case .untilInvalidated(let maxEntries), .timeToLive(_, let maxEntries): max(0, maxEntries)
        }
    }

    /// How long any value stays fresh, if the policy limits it.
    @inlinable
    var timeToLive: Duration? {
        if case .timeToLive(let timeToLive, _) = self { timeToLive } else { nil }
    }
}
