import Synchronization

/// Feeds' change counts, read without a lock: a page is stamped with its feed's count when its load starts and is
/// served from memory only while the count is unchanged, so a page loaded before a change is never served after it.
///
/// The counts live in a fixed number of slots, a feed's slot chosen by its hash. Feeds that share a slot share a
/// count: a change to one also retires the other's cached pages (a spurious reload, never a stale page). Memory stays
/// fixed however many feeds change, and reading a count is one load from memory that changes only on writes, so the
/// threads serving cached pages at once do not take turns on a lock for it.
///
/// `@unchecked Sendable`: the slots are allocated once, freed in `deinit`, and in between only ever read and written
/// through the atomic operations of `Atomic`.
final class ChangeCounts: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let mask: Int

    /// Counts in `slots` slots (a power of two), all zero.
    init(slots count: Int = 4096) {
        precondition(count > 0 && count & (count - 1) == 0, "the slot count must be a power of two")
        slots = .allocate(capacity: count)
        for index in 0 ..< count { (slots + index).initialize(to: Atomic(0)) }
        mask = count - 1
    }

    deinit {
        slots.deinitialize(count: mask + 1)
        slots.deallocate()
    }

    /// The count of `feed`'s slot now.
    func count(of feed: FeedAddress) -> UInt64 {
        slots[slot(of: feed)].load(ordering: .sequentiallyConsistent)
    }

    /// Moves `feed`'s count on (a change to it is known).
    func bump(_ feed: FeedAddress) {
        slots[slot(of: feed)].wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// The slot of `feed`.
    func slot(of feed: FeedAddress) -> Int {
        feed.hashValue & mask
    }
}
