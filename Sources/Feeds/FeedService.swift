import Coordination
import Foundation

/// Feed reads behind a `RequestCoordinator`: concurrent loads of one page cost one query, and a hot page is served
/// from memory until a write to its feed commits — here, or on another replica (via the change notices).
public final class FeedService: Sendable {
    let store: FeedStore
    let pages: RequestCoordinator<FeedPageKey, FeedPageResult>
    /// Guards, per feed, the page keys that may be cached or loading, so a write can invalidate them all.
    private let pageKeys = Locked<[FeedAddress: Set<FeedPageKey>]>([:])

    /// A service over `store`; `caching: false` keeps dedup but serves every read from Postgres.
    public init(store: FeedStore, caching: Bool = true, maxCachedPages: Int = 10_000) {
        self.store = store
        self.pages = RequestCoordinator(caching: caching ? .untilInvalidated(maxEntries: maxCachedPages) : .disabled)
    }

    /// The page for `key`, from memory when cached, else loaded once for all concurrent callers.
    public func page(_ key: FeedPageKey) async throws -> FeedPageResult {
        if let cached = pages.cachedValue(for: key) { return cached }
        remember(key)
        return try await pages.value(for: key) { [store] key in try await store.page(key) }
    }

    /// The page for `key` if it is in memory now (for the synchronous fast path).
    public func cachedPage(_ key: FeedPageKey) -> FeedPageResult? {
        pages.cachedValue(for: key)
    }

    /// Adds an item; returns once it is committed and this replica's cache no longer holds the feed's old pages.
    public func insert(_ item: FeedStore.NewItem, into feed: FeedAddress) async throws -> FeedItem {
        let created = try await store.insert(item, into: feed)
        await invalidate(feed)
        return created
    }

    /// Changes an item (nil when absent); invalidates as `insert` does.
    public func update(_ id: UUID, in feed: FeedAddress, with changes: FeedStore.Changes) async throws -> FeedItem? {
        let updated = try await store.update(id, in: feed, with: changes)
        if updated != nil { await invalidate(feed) }
        return updated
    }

    /// Deletes an item (false when absent); invalidates as `insert` does.
    public func delete(_ id: UUID, in feed: FeedAddress) async throws -> Bool {
        let deleted = try await store.delete(id, in: feed)
        if deleted { await invalidate(feed) }
        return deleted
    }

    /// Drops every cached or loading page of `feed` (after a write here, or a change notice from elsewhere).
    public func invalidate(_ feed: FeedAddress) async {
        let keys = pageKeys.withLock { $0.removeValue(forKey: feed) } ?? []
        for key in keys { await pages.invalidate(key) }
    }

    /// Applies a change notice received from Postgres (any replica's write).
    public func apply(notice: String) async {
        guard let feed = FeedAddress(notice: notice) else { return }
        await invalidate(feed)
    }

    /// Drops everything: after the change-notice listener reconnected, notices may have been missed.
    public func invalidateAll() async {
        pageKeys.withLock { $0.removeAll() }
        await pages.invalidateAll()
    }

    /// Loads started, callers joined and cache hits, for metrics.
    public var statistics: RequestCoordinatorStatistics { pages.statistics }

    private func remember(_ key: FeedPageKey) {
        _ = pageKeys.withLock { $0[key.feed, default: []].insert(key) }
    }
}
