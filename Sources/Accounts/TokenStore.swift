import Coordination
import Foundation

/// Verified bearer secrets, cached so the hot path does not query Postgres on every request.
///
/// A cold secret under a burst is looked up once (concurrent callers share one lookup), and different cold secrets
/// arriving together (clients reconnecting after a restart) are looked up together, a batch per query
/// (`BatchLoader`). Entries live at most
/// `revocationDelay` (5 s), so a revocation made on any replica takes effect everywhere within that time;
/// revocations made here take effect at once. Expiry is checked on every use, not cached.
public final class TokenStore: Sendable {
    private let cache: RequestCoordinator<TokenKey, TokenRecord>
    private let batches: BatchLoader<TokenKey, TokenRecord>

    /// A store in front of `store`'s lookups.
    public init(store: AccountStore, revocationDelay: Duration = .seconds(5), maxEntries: Int = 100_000) {
        self.cache = RequestCoordinator(caching: .timeToLive(revocationDelay, maxEntries: maxEntries))
        self.batches = BatchLoader { tokens in
            // Secrets of both kinds may share a batch: a query per kind.
            var records: [TokenKey: TokenRecord] = [:]
            for kind in [SecretToken.Kind.session, .apiKey] {
                let ofKind = tokens.map(\.token).filter { SecretToken.kind(of: $0) == kind }
                for (token, record) in try await store.lookup(ofKind, kind: kind) { records[TokenKey(token: token)] = record }
            }
            return records
        }
    }

    /// The record for `token` (a well-formed secret: `SecretToken.kind(of:)` is not nil), from the cache when fresh,
    /// else from Postgres: once for concurrent callers of one secret, in one batch with other cold secrets.
    public func record(for token: String) async throws -> TokenRecord {
        let key = TokenKey(token: token)
        if let cached = cache.cachedValue(for: key) { return cached }
        return try await cache.value(for: key, from: batches) { $0 ?? .unknown }
    }

    /// The record for `token` if it is cached now, without waiting (for the synchronous fast path).
    public func cachedRecord(for token: String) -> TokenRecord? {
        cachedRecord(for: TokenKey(token: token))
    }

    /// The record for the secret `key` names if it is cached now, without waiting. Only secrets looked up through
    /// ``record(for:)`` are cached, and it takes well-formed ones only.
    func cachedRecord(for key: TokenKey) -> TokenRecord? {
        cache.cachedValue(for: key)
    }

    /// Forgets `token` here at once (after revoking it).
    public func forget(_ token: String) async {
        await cache.invalidate(TokenKey(token: token))
    }

    /// Forgets every cached secret here (after revoking one by id, whose secret is not known).
    public func forgetAll() async {
        await cache.invalidateAll()
    }

    /// How many lookups reached Postgres, joined another, or were served from the cache.
    public var statistics: RequestCoordinatorStatistics { cache.statistics }
}
