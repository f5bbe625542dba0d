import Coordination
import Accounts
import Foundation

/// Feed reads behind a `RequestCoordinator`: concurrent loads of one page cost one query, and a hot page is served
/// from memory until a write to its feed commits — here, or on another replica (via the change notices).
public final class FeedService: Sendable {
    let store: FeedStore
    let pages: RequestCoordinator<FeedPageKey, StampedPage>
    /// Reads of different pages that miss the cache together share a statement (`FeedStore.pages`): a busy replica
    /// reading many distinct feeds then runs a few statements for many requests instead of one each. A load that
    /// starts after a write never joins a batch already running (`BatchLoader`), as the change counts require.
    let reads: BatchLoader<FeedPageKey, FeedPageResult>
    /// Each feed's change count: bumped the moment a change is known (before the caches are invalidated), and stamped
    /// on every page as its load starts, so a page loaded before a change is never served after it.
    private let epochs: ChangeCounts
    /// Guards, per feed, the page keys that may be cached or loading, so a write can invalidate them all, and their
    /// total. Keys come from clients (any feed, limit and cursor, forged ones included), so the index is bounded:
    /// past `maxTrackedPageKeys` it is emptied together with the page cache. That is safe because correctness
    /// rests on the feeds' change counts (a page stamped before a change is never served), not on this index.
    private let pageKeys = Locked<(byFeed: [FeedAddress: Set<FeedPageKey>], total: Int)>(([:], 0))
    private let maxTrackedPageKeys: Int
    private let echoes = NoticeEchoes()
    /// Whether change notices come back to this process (a listener runs); writes then wait for their echo.
    private let listening: @Sendable () -> Bool
    private let echoTimeout: Duration
    /// Whether pages are kept in memory; when not, there is nothing for the synchronous fast path to find.
    public let caching: Bool

    /// A service over `store`; `caching: false` keeps dedup but serves every read from Postgres.
    ///
    /// `listening` tells whether this process's change-notice listener is connected; while it is, a write is
    /// acknowledged only once its notice has come back (at most `echoTimeout` later), see `NoticeEchoes`.
    ///
    /// `changeCountSlots` (a power of two) bounds the memory of the feeds' change counts; feeds sharing a slot retire
    /// each other's cached pages on a change (see `ChangeCounts`).
    public init(store: FeedStore, caching: Bool = true, maxCachedPages: Int = 10_000,
                listening: @escaping @Sendable () -> Bool = { false }, echoTimeout: Duration = .milliseconds(500),
                changeCountSlots: Int = 4096) {
        self.store = store
        self.epochs = ChangeCounts(slots: changeCountSlots)
        self.listening = listening
        self.echoTimeout = echoTimeout
        self.caching = caching
        self.pages = RequestCoordinator(caching: caching ? .untilInvalidated(maxEntries: maxCachedPages) : .disabled)
        self.reads = BatchLoader(maxBatchSize: FeedService.maxBatchSize,
                                 maxConcurrentBatches: FeedService.concurrentBatches) { [store] keys in
            try await store.pages(keys)
        }
        self.maxTrackedPageKeys = 2 * maxCachedPages
    }

    /// The most pages one batched read asks for: a batch's callers wait for all of its rows.
    static let maxBatchSize = 32
    /// Batched reads running at once (each holds a pooled connection): a lone read starts at once, and while they all
    /// run, the pages asked for meanwhile gather into the next ones.
    static let concurrentBatches = 4

    /// A page with the feed's change count when its load started.
    struct StampedPage: Sendable {
        let result: FeedPageResult
        let epoch: UInt64
    }

    /// The page for `key`, from memory when cached and current, else loaded once for all concurrent callers.
    public func page(_ key: FeedPageKey) async throws -> FeedPageResult {
        if let cached = cachedPage(key) { return cached }
        if remember(key) { await pages.invalidateAll() }
        let stamped = try await load(key)
        if stamped.epoch == epoch(of: key.feed) { return stamped.result }
        // Loaded (or cached) before a change this process has heard of: drop it and load again.
        await pages.invalidate(key)
        return try await load(key).result
    }

    /// The page through the coordinator, stamped with the feed's change count as the load starts.
    private func load(_ key: FeedPageKey) async throws -> StampedPage {
        let epoch = epoch(of: key.feed)
        return try await pages.value(for: key, from: reads) { StampedPage(result: $0 ?? .noSuchFeed, epoch: epoch) }
    }

    /// The page for `key` if it is in memory now and still current (for the synchronous fast path).
    public func cachedPage(_ key: FeedPageKey) -> FeedPageResult? {
        guard let stamped = pages.cachedValue(for: key), stamped.epoch == epoch(of: key.feed) else { return nil }
        return stamped.result
    }

    private func epoch(of feed: FeedAddress) -> UInt64 {
        epochs.count(of: feed)
    }

    /// Marks `feed` changed at once, without waiting for anything: cached pages of it stop being served.
    /// Called inline by the change-notice listener, and by this process's own writes.
    public func markChanged(notice: String) {
        guard let feed = FeedAddress(notice: notice) else { return }
        markChanged(feed)
    }

    func markChanged(_ feed: FeedAddress) {
        epochs.bump(feed)
    }

    /// Adds an item; returns once it is committed and this replica's cache no longer holds the feed's old pages.
    public func insert(_ item: FeedStore.NewItem, into feed: FeedAddress) async throws -> FeedItem {
        try await write(feed) { notice in (try await store.insert(item, into: feed, notice: notice), true) }
    }

    /// Changes an item (nil when absent); invalidates as `insert` does.
    public func update(_ id: UUID, in feed: FeedAddress, with changes: FeedStore.Changes) async throws -> FeedItem? {
        try await write(feed) { notice in
            let updated = try await store.update(id, in: feed, with: changes, notice: notice)
            return (updated, updated != nil)
        }
    }

    /// Deletes an item (false when absent); invalidates as `insert` does.
    public func delete(_ id: UUID, in feed: FeedAddress) async throws -> Bool {
        try await write(feed) { notice in
            let deleted = try await store.delete(id, in: feed, notice: notice)
            return (deleted, deleted)
        }
    }

    /// Runs a write (`body` reports whether it changed anything, i.e. sent its notice), then invalidates this
    /// replica's pages and waits (bounded) for the notice to come back, so other replicas have it before the
    /// write is acknowledged.
    private func write<T: Sendable>(_ feed: FeedAddress, _ body: (String) async throws -> (T, Bool)) async throws -> T {
        let notice = feed.notice(nonce: UUID().lowercased)
        let waitForEcho = listening()
        if waitForEcho { echoes.expect(notice) }
        let (result, changed): (T, Bool)
        do {
            (result, changed) = try await body(notice)
        } catch {
            echoes.forget(notice)
            throw error
        }
        guard changed else {
            echoes.forget(notice)
            return result
        }
        markChanged(feed)
        await invalidate(feed)
        if waitForEcho { await echoes.wait(for: notice, timeout: echoTimeout) }
        return result
    }

    /// Drops every cached or loading page of `feed` (after a write here, or a change notice from elsewhere).
    public func invalidate(_ feed: FeedAddress) async {
        let keys = pageKeys.withLock { index -> Set<FeedPageKey> in
            let keys = index.byFeed.removeValue(forKey: feed) ?? []
            index.total -= keys.count
            return keys
        }
        for key in keys { await pages.invalidate(key) }
    }

    /// Applies a change notice received from Postgres (any replica's write).
    public func apply(notice: String) async {
        guard let feed = FeedAddress(notice: notice) else { return }
        await invalidate(feed)
        echoes.arrived(notice)
    }

    /// Drops everything: after the change-notice listener reconnected, notices may have been missed.
    public func invalidateAll() async {
        pageKeys.withLock { $0 = ([:], 0) }
        await pages.invalidateAll()
    }

    /// Loads started, callers joined and cache hits, for metrics.
    public var statistics: RequestCoordinatorStatistics { pages.statistics }

    /// Page keys tracked for invalidation now (bounded; see `pageKeys`).
    public var trackedPageKeys: Int { pageKeys.withLock { $0.total } }

    /// Tracks `key`; returns true when the index was full and has been emptied (the caller then empties the cache).
    private func remember(_ key: FeedPageKey) -> Bool {
        let limit = maxTrackedPageKeys
        return pageKeys.withLock { index -> Bool in
            var emptied = false
            if index.total >= limit {
                index = ([:], 0)
                emptied = true
            }
            if index.byFeed[key.feed, default: []].insert(key).inserted { index.total += 1 }
            return emptied
        }
    }
}
