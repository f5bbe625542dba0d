/// A bounded key–value store that forgets its least recently used entry to make room, and entries past their expiry.
///
/// A pure value with O(1) operations: entries live in slots (parallel arrays) threaded by a doubly linked list from the
/// newest (most recently inserted or read) to the oldest. Expired entries are dropped lazily, when looked up or
/// evicted, so ``count`` may include some. Not thread-safe: keep it inside the lock or actor that owns it.
public struct LRUCache<Key: Hashable, Value> {
    /// A slot's place in the list and its expiry, kept apart from its key and value: walking the list and checking an
    /// expiry then never copies (and retains) a key or a value, as reading a field of a whole optional entry did.
    @usableFromInline
    struct Links: Sendable {
        /// The slot used more recently than this one, nil for the newest.
        @usableFromInline var newer: Int?
        /// The slot used less recently than this one, nil for the oldest.
        @usableFromInline var older: Int?
        /// When the entry expires, in nanoseconds from `ClockOrigin` (an instant's layout is not fixed: see there).
        @usableFromInline var expiry: Int64?

        @inlinable
        init(expiry: ContinuousClock.Instant?) {
            self.expiry = expiry.map(ClockOrigin.nanoseconds(of:))
        }
    }

    /// The most entries held; inserting into a full cache first evicts the oldest. Zero keeps nothing.
    public let capacity: Int
    // Internal for inlining: lookups, inserts and removals are specialised in the modules that use the coordinator.
    @usableFromInline var slotsByKey: [Key: Int] = [:]
    /// By slot: its key and value (nil when the slot is free), and its links.
    @usableFromInline var keys: [Key?] = []
    @usableFromInline var values: [Value?] = []
    @usableFromInline var links: [Links] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var newest: Int?
    @usableFromInline var oldest: Int?

    /// An empty cache holding at most `capacity` entries (zero or less: none).
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Entries held, expired ones not yet dropped included.
    public var count: Int { slotsByKey.count }

    /// The value for `key` unless it expired at or before `now`; a hit makes the entry the newest.
    @inlinable
    public mutating func value(for key: Key, now: ContinuousClock.Instant) -> Value? {
        value(for: key, nanosecondsNow: ClockOrigin.nanoseconds(of: now))
    }

    /// ``value(for:now:)`` with now given as nanoseconds from `ClockOrigin` (`ClockOrigin.nanosecondsNow()`).
    @inlinable
    public mutating func value(for key: Key, nanosecondsNow now: Int64) -> Value? {
        guard let slot = slotsByKey[key] else { return nil }
        if let expiry = links[slot].expiry, expiry <= now {
            remove(key)
            return nil
        }
        moveToNewest(slot)
        return values[slot]
    }

    /// The value for `key`, for a cache whose entries never expire (inserted with a nil expiry): no clock is read.
    /// A hit makes the entry the newest.
    @inlinable
    public mutating func value(for key: Key) -> Value? {
        guard let slot = slotsByKey[key] else { return nil }
        moveToNewest(slot)
        return values[slot]
    }

    /// Stores `value` as the newest entry, replacing any for `key`; `expiry` nil means it never expires.
    @inlinable
    public mutating func insert(_ value: Value, for key: Key, expiry: ContinuousClock.Instant?) {
        guard capacity > 0 else { return }
        if let slot = slotsByKey[key] {
            values[slot] = value
            links[slot].expiry = expiry.map(ClockOrigin.nanoseconds(of:))
            moveToNewest(slot)
            return
        }
        if slotsByKey.count >= capacity, let oldest, let oldestKey = keys[oldest] { remove(oldestKey) }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            keys[slot] = key
            values[slot] = value
            links[slot] = Links(expiry: expiry)
        } else {
            slot = links.count
            keys.append(key)
            values.append(value)
            links.append(Links(expiry: expiry))
        }
        slotsByKey[key] = slot
        link(slot)
    }

    /// Drops the entry for `key`, if any.
    @inlinable
    public mutating func remove(_ key: Key) {
        guard let slot = slotsByKey.removeValue(forKey: key) else { return }
        unlink(slot)
        keys[slot] = nil
        values[slot] = nil
        freeSlots.append(slot)
    }

    /// Drops every entry.
    public mutating func removeAll() {
        self = LRUCache(capacity: capacity)
    }

    /// Puts an unlinked slot at the newest end.
    @inlinable
    mutating func link(_ slot: Int) {
        links[slot].older = newest
        links[slot].newer = nil
        if let newest { links[newest].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }

    @inlinable
    mutating func unlink(_ slot: Int) {
        let (newer, older) = (links[slot].newer, links[slot].older)
        if let newer { links[newer].older = older } else { newest = older }
        if let older { links[older].newer = newer } else { oldest = newer }
    }

    @inlinable
    mutating func moveToNewest(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        link(slot)
    }
}

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}
