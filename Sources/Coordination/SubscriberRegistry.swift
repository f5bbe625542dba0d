/// The bookkeeping behind ``SubscriberHub``: which subscribers' mailboxes follow which key. A plain value, mutated only
/// under the hub's lock; it never calls into a stream, so nothing it does can run a termination handler.
///
/// Each key's subscribers are one dictionary, so ``subscribers(of:)`` hands out a copy-on-write snapshot in O(1):
/// a publish iterates it outside the lock, and only a registration change during that publish pays for a copy.
@usableFromInline
struct SubscriberRegistry<Key: Hashable & Sendable, Event: Sendable> {
    @usableFromInline typealias Mailbox = SubscriberMailbox<Event>

    // Internal with `@usableFromInline`, so the hub's inlinable subscribe and publish, specialized where the hub is
    // used, reach them without generic dictionary code.
    @usableFromInline var byKey: [Key: [UInt64: Mailbox]] = [:]
    @usableFromInline var count = 0
    @usableFromInline var lastID: UInt64 = 0
    /// Set by ``removeAll()``: the hub has shut down and turns new subscribers away.
    @usableFromInline var isClosed = false

    /// A new id, unique for the life of the hub.
    @inlinable
    mutating func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Adds a subscriber; false, adding nothing, once the registry is closed.
    @inlinable
    mutating func add(_ mailbox: Mailbox, id: UInt64, for key: Key) -> Bool {
        guard !isClosed else { return false }
        byKey[key, default: [:]][id] = mailbox
        count += 1
        return true
    }

    /// Removes one subscriber, returning its mailbox (if it was still registered) so the caller releases it
    /// after unlocking.
    @inlinable
    mutating func remove(_ id: UInt64, from key: Key) -> Mailbox? {
        guard let removed = byKey[key]?.removeValue(forKey: id) else { return nil }
        if byKey[key]?.isEmpty == true { byKey[key] = nil }
        count -= 1
        return removed
    }

    /// Forgets every subscriber of `key`, returning their mailboxes for the caller to finish after unlocking.
    @inlinable
    mutating func removeAll(for key: Key) -> [UInt64: Mailbox] {
        guard let removed = byKey.removeValue(forKey: key) else { return [:] }
        count -= removed.count
        return removed
    }

    /// Forgets every subscriber and closes the registry, returning what it held for the caller to finish.
    @inlinable
    mutating func removeAll() -> [Key: [UInt64: Mailbox]] {
        isClosed = true
        count = 0
        defer { byKey = [:] }
        return byKey
    }

    /// Every key's subscribers (a copy-on-write snapshot).
    @inlinable
    var everyone: [Key: [UInt64: Mailbox]] { byKey }

    /// The current subscribers of `key`, as a snapshot.
    @inlinable
    func subscribers(of key: Key) -> [UInt64: Mailbox] {
        byKey[key] ?? [:]
    }

    /// How many subscribers follow `key`.
    func count(for key: Key) -> Int {
        byKey[key]?.count ?? 0
    }
}
