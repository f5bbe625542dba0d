import Coordination
import Accounts
import Foundation
import Postgres
import Synchronization

/// Feed reads served from memory while current and otherwise loaded once for all concurrent callers, and feed
/// writes acknowledged once this replica (and, through the change notices, the others) no longer serves the old
/// pages. What is current is decided by one ``FeedFreshness`` state machine; the `RequestCoordinator` shares the
/// loads it asks for, and the `BatchLoader` reads pages that miss together in one statement.
public final class FeedService: Sendable {
    typealias Freshness = FeedFreshness<FeedPageResult, CheckedContinuation<Void, Never>>

    let store: FeedStore
    /// Guards the freshness state machine: the cached pages, the feeds' change counts and the notices followed.
    /// A lock, not an actor: cached pages are served on libmicrohttpd's threads, and notices are applied on the
    /// listener's, both without waiting for a task.
    let freshness: Locked<Freshness>
    /// Shares a load among the callers asking for the same page at the same change count. It caches nothing:
    /// the cache is the state machine's.
    let pages: RequestCoordinator<FeedPageLoad, FeedPageResult>
    /// Reads of different pages that miss the cache together share a statement (`FeedStore.pages`): a busy replica
    /// reading many distinct feeds then runs a few statements for many requests instead of one each.
    let reads: BatchLoader<FeedPageLoad, FeedPageResult>
    /// Whether change notices come back to this process now (its listener listens); writes then wait for their
    /// echo. Set by ``receive(_:)``.
    let listening = Atomic<Bool>(false)
    let echoTimeout: Duration
    /// Whether pages are kept in memory; when not, there is nothing for the synchronous fast path to find.
    public let caching: Bool

    /// A service over `store`; `caching: false` keeps load sharing but serves every read from Postgres.
    ///
    /// The service hears change notices, and whether they reach it, through ``receive(_:)``: the listener's inline
    /// observer. While they do, a write is acknowledged only once its notice has come back (at most `echoTimeout`
    /// later).
    ///
    /// `changeCountSlots` (a power of two) bounds the memory of the feeds' change counts; feeds sharing a slot retire
    /// each other's cached pages on a change (see ``FeedFreshness``). Batched reads run on `executor` when given (the
    /// one the requests run on).
    public init(store: FeedStore, caching: Bool = true, maxCachedPages: Int = 10_000,
                echoTimeout: Duration = .milliseconds(500),
                changeCountSlots: Int = 4096, executor: (any TaskExecutor)? = nil) {
        self.store = store
        self.echoTimeout = echoTimeout
        self.caching = caching
        let freshness = Locked(Freshness(maxPages: caching ? maxCachedPages : 0, slots: changeCountSlots))
        self.freshness = freshness
        self.pages = RequestCoordinator(caching: .disabled)
        self.reads = BatchLoader(maxBatchSize: FeedService.maxBatchSize,
                                 maxConcurrentBatches: FeedService.concurrentBatches, executor: executor) { loads in
            try await Self.answer(loads, from: caching ? freshness : nil, or: store)
        }
    }

    /// A batch's pages: those already in memory and current from there (see `FeedFreshness.cachedPage(answering:)`),
    /// the others in one statement.
    private static func answer(_ loads: [FeedPageLoad], from freshness: Locked<Freshness>?,
                               or store: FeedStore) async throws -> [FeedPageLoad: FeedPageResult] {
        var answers: [FeedPageLoad: FeedPageResult] = [:]
        if let freshness {
            freshness.withLock { machine in
                for load in loads { answers[load] = machine.cachedPage(answering: load) }
            }
        }
        let missing = loads.filter { answers[$0] == nil }
        guard !missing.isEmpty else { return answers }
        let found = try await store.pages(Array(Set(missing.map(\.page))))
        for load in missing { answers[load] = found[load.page] ?? .noSuchFeed }
        return answers
    }

    /// The most pages one batched read asks for: a batch's callers wait for all of its rows.
    static let maxBatchSize = 32
    /// Batched reads running at once (each holds a pooled connection): a lone read starts at once, and while they all
    /// run, the pages asked for meanwhile gather into the next ones.
    static let concurrentBatches = 4

    /// The page for `key`, from memory when cached and current, else loaded once for all concurrent callers.
    public func page(_ key: FeedPageKey) async throws -> FeedPageResult {
        switch freshness.withLock({ $0.read(key) }) {
        case .serve(let page):
            return page
        case .load(let load):
            return try await page(loading: load)
        }
    }

    /// Joins `load` if it is in flight, or starts it. Between a caller's miss in memory and its arrival here, another
    /// load of the same key may have finished and cached its page; the batch then answers from memory.
    func page(loading load: FeedPageLoad) async throws -> FeedPageResult {
        // The transform runs once per load, as its batch answers: the state machine keeps the page if the feed has
        // not changed since the load started.
        try await pages.value(for: load, from: reads) { [freshness] found in
            let page = found ?? .noSuchFeed
            _ = freshness.withLock { $0.loadFinished(load, with: page) }
            return page
        }
    }

    /// The page for `key` if it is in memory now and still current (for the synchronous fast path).
    public func cachedPage(_ key: FeedPageKey) -> FeedPageResult? {
        freshness.withLock { $0.cachedPage(key) }
    }

    /// What the listener hears, the moment it hears it (call it from the listener's `inline` hook, before any task
    /// is scheduled). Another replica's change notice retires the feed's pages here at once, so a read right after
    /// that replica acknowledged its write does not get the old page; this process's own notices release their
    /// waiting writers without retiring anything; notices on other channels are ignored. Listening again after a
    /// gap retires every page and load, since notices may have been missed.
    public func receive(_ event: ListenerInlineEvent) {
        switch event {
        case .notifications(let notices):
            for notice in notices where notice.channel == FeedStore.channel {
                guard let feed = FeedAddress(notice: notice.payload) else { continue }
                freshness.withLock { $0.noticed(notice.payload, about: feed) }?.resume()
            }
        case .listening(let afterGap):
            if afterGap { freshness.withLock { $0.reconnected() } }
            listening.store(true, ordering: .releasing)
        case .notListening:
            listening.store(false, ordering: .releasing)
        }
    }

    /// Loads started, callers joined, cache hits and pages cached, for metrics.
    public var statistics: RequestCoordinatorStatistics {
        var statistics = pages.statistics
        (statistics.cacheHits, statistics.cachedEntries) = freshness.withLock { ($0.hits, $0.cachedPages) }
        return statistics
    }

    /// Pages held in memory now (bounded by `maxCachedPages`, whatever keys clients send).
    public var cachedPages: Int { freshness.withLock { $0.cachedPages } }
}
