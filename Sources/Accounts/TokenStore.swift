import Coordination
import Foundation

/// Verified bearer secrets, cached so the hot path does not query Postgres on every request.
///
/// A cold secret under a burst is looked up once (concurrent callers share one lookup). Entries live at most
/// `revocationDelay` (5 s), so a revocation made on any replica takes effect everywhere within that time;
/// revocations made here take effect at once. Expiry is checked on every use, not cached.
public final class TokenStore: Sendable {
    private let store: AccountStore
    private let cache: RequestCoordinator<String, TokenRecord>

    /// A store in front of `store`'s lookups.
    public init(store: AccountStore, revocationDelay: Duration = .seconds(5), maxEntries: Int = 100_000) {
        self.store = store
        self.cache = RequestCoordinator(caching: .timeToLive(revocationDelay, maxEntries: maxEntries))
    }

    /// The record for `token`, from the cache when fresh, else from Postgres (once for concurrent callers).
    public func record(for token: String, kind: SecretToken.Kind) async throws -> TokenRecord {
        if let cached = cache.cachedValue(for: token) { return cached }
        return try await cache.value(for: token) { [store] token in
            try await store.lookup(token, kind: kind)
        }
    }

    /// The record for `token` if it is cached now, without waiting (for the synchronous fast path).
    public func cachedRecord(for token: String) -> TokenRecord? {
        cache.cachedValue(for: token)
    }

    /// Forgets `token` here at once (after revoking it).
    public func forget(_ token: String) async {
        await cache.invalidate(token)
    }

    /// Forgets every cached secret here (after revoking one by id, whose secret is not known).
    public func forgetAll() async {
        await cache.invalidateAll()
    }

    /// How many lookups reached Postgres, joined another, or were served from the cache.
    public var statistics: RequestCoordinatorStatistics { cache.statistics }
}
