import Coordination

/// Which feed pages this process may serve from memory and which loads its callers may share: a pure state machine,
/// fed what happens (reads, finished loads, changes, this process's own notices coming back, listener reconnections)
/// and answering what to do. `FeedService` keeps it under one lock and carries out its answers; the
/// `RequestCoordinator` shares the loads it asks for and the `BatchLoader` runs them.
///
/// The rule: a caller gets a page loaded after every change this process knew of when the caller arrived. Each feed
/// has a change count, stamped on each load ``read(_:)`` asks for; callers share a load only at the same stamp (the
/// stamp is part of the load's key), and a finished load is cached, and a cached page served, only while its stamp
/// is its feed's count. A change therefore retires the feed's cached pages and loads in flight at once, in
/// one step under the lock, without knowing which pages they are.
///
/// Counts live in a fixed number of slots, chosen by the feed's hash: memory stays fixed however many feeds change,
/// and feeds sharing a slot retire each other's pages (a spurious reload, never a stale page). The mistake to avoid
/// is acknowledging a write before ``changed(_:)`` for its feed has run here.
struct FeedFreshness<Page, Writer> {
    /// What a read does.
    enum ReadAction {
        /// Answer with this page, held in memory and current.
        case serve(Page)
        /// Start this load, or join it if one with the same key (page and stamp) is in flight.
        case load(FeedPageLoad)
    }

    /// What became of a finished load's page.
    enum LoadOutcome: Equatable {
        /// Kept in memory for later callers.
        case cached
        /// Not kept: the feed changed after the load started (or caching is off). Its own callers still get it.
        case discarded
    }

    /// A cached page with the change count of its feed when its load started.
    struct StampedPage {
        let page: Page
        let stamp: UInt64
    }

    /// Change counts by slot; a feed's slot is its hash (`FeedAddress.hash`) masked by `mask`.
    private(set) var counts: [UInt64]
    let mask: Int
    private(set) var pages: LRUCache<FeedPageKey, StampedPage>
    /// Pages served from memory, for metrics.
    private(set) var hits = 0
    /// This process's notices sent and not yet seen back (see `FeedFreshness+Echoes.swift`).
    var echoes: [String: Echo] = [:]

    /// Nothing cached; at most `maxPages` pages kept (zero: none, loads are still shared), counts in `slots`
    /// slots (a power of two).
    init(maxPages: Int, slots: Int) {
        precondition(slots > 0 && slots & (slots - 1) == 0, "the slot count must be a power of two")
        counts = [UInt64](repeating: 0, count: slots)
        mask = slots - 1
        pages = LRUCache(capacity: maxPages)
    }

    /// Pages held in memory now (some may be stale, dropped when next read or evicted).
    var cachedPages: Int { pages.count }

    /// The change count of `feed`'s slot.
    func count(of feed: FeedAddress) -> UInt64 {
        counts[feed.hash & mask]
    }

    /// The page for `key` if it is in memory and current: the fast path, which never loads. A stale page found is
    /// dropped.
    mutating func cachedPage(_ key: FeedPageKey) -> Page? {
        guard let stamped = pages.value(for: key) else { return nil }
        guard stamped.stamp == count(of: key.feed) else {
            pages.remove(key)
            return nil
        }
        hits += 1
        return stamped.page
    }

    /// A caller asks for `key`: serve it from memory, or load it stamped with the feed's count now.
    mutating func read(_ key: FeedPageKey) -> ReadAction {
        if let page = cachedPage(key) { return .serve(page) }
        return .load(FeedPageLoad(page: key, stamp: count(of: key.feed)))
    }

    /// A page in memory that answers `load` without reading Postgres: one cached and current now, so loaded after
    /// every change known when the load's callers arrived. A load can find one when a caller missed the cache just
    /// before another load of the same key finished and cached its page, and reached the coordinator just after.
    mutating func cachedPage(answering load: FeedPageLoad) -> Page? {
        cachedPage(load.page)
    }

    /// `load` finished with `page`: cache it if no change to its feed came since it started.
    @discardableResult
    mutating func loadFinished(_ load: FeedPageLoad, with page: Page) -> LoadOutcome {
        guard load.stamp == count(of: load.page.feed), pages.capacity > 0 else { return .discarded }
        pages.insert(StampedPage(page: page, stamp: load.stamp), for: load.page, expiry: nil)
        return .cached
    }

    /// `feed` changed (a write here committed, or another replica's notice arrived): its cached pages and its loads
    /// in flight are retired at once; callers from now on start a new load.
    mutating func changed(_ feed: FeedAddress) {
        counts[feed.hash & mask] &+= 1
    }

    /// The listener reconnected, so notices may have been missed: every page and every load in flight is retired.
    mutating func reconnected() {
        for slot in counts.indices { counts[slot] &+= 1 }
        pages.removeAll()
    }
}

/// One load of a feed page: the page, and its feed's change count when the load started. Callers share a load only
/// when both match, so a caller arriving after a change never joins a load that began before it.
struct FeedPageLoad: Hashable, Sendable {
    let page: FeedPageKey
    let stamp: UInt64
}
