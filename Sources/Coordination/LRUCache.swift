/// A bounded key–value store that forgets its least recently used entry to make room, and entries past their expiry.
///
/// A pure value with O(1) operations: entries live in an array of slots threaded by a doubly linked list from the
/// newest (most recently inserted or read) to the oldest. Expired entries are dropped lazily, when looked up or
/// evicted, so ``count`` may include some.
@usableFromInline
struct LRUCache<Key: Hashable, Value> {
    @usableFromInline
    struct Entry {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var expiry: ContinuousClock.Instant?
        /// The slot used more recently than this one, nil for the newest.
        @usableFromInline var newer: Int?
        /// The slot used less recently than this one, nil for the oldest.
        @usableFromInline var older: Int?

        @inlinable
        init(key: Key, value: Value, expiry: ContinuousClock.Instant?) {
            self.key = key
            self.value = value
            self.expiry = expiry
        }
    }

    /// The most entries held; inserting into a full cache first evicts the oldest. Zero keeps nothing.
    @usableFromInline let capacity: Int
    // Internal for inlining: lookups, inserts and removals are specialised in the modules that use the coordinator.
    @usableFromInline var slotsByKey: [Key: Int] = [:]
    @usableFromInline var slots: [Entry?] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var newest: Int?
    @usableFromInline var oldest: Int?

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { slotsByKey.count }

    /// The value for `key` unless it expired at or before `now`; a hit makes the entry the newest.
    @inlinable
    mutating func value(for key: Key, now: ContinuousClock.Instant) -> Value? {
        // The entry's fields are read in place: copying the whole entry (key included) costs retains per hit.
        guard let slot = slotsByKey[key], slots[slot] != nil else { return nil }
        if let expiry = slots[slot]!.expiry, expiry <= now {
            remove(key)
            return nil
        }
        moveToNewest(slot)
        return slots[slot]!.value
    }

    /// Stores `value` as the newest entry, replacing any for `key`; `expiry` nil means it never expires.
    @inlinable
    mutating func insert(_ value: Value, for key: Key, expiry: ContinuousClock.Instant?) {
        guard capacity > 0 else { return }
        if let slot = slotsByKey[key] {
            slots[slot]!.value = value
            slots[slot]!.expiry = expiry
            moveToNewest(slot)
            return
        }
        if slotsByKey.count >= capacity, let oldest { remove(slots[oldest]!.key) }
        let entry = Entry(key: key, value: value, expiry: expiry)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = entry
        } else {
            slot = slots.count
            slots.append(entry)
        }
        slotsByKey[key] = slot
        link(slot)
    }

    /// Drops the entry for `key`, if any.
    @inlinable
    mutating func remove(_ key: Key) {
        guard let slot = slotsByKey.removeValue(forKey: key) else { return }
        unlink(slot)
        slots[slot] = nil
        freeSlots.append(slot)
    }

    mutating func removeAll() {
        self = LRUCache(capacity: capacity)
    }

    /// Puts an unlinked slot at the newest end.
    @inlinable
    mutating func link(_ slot: Int) {
        slots[slot]!.older = newest
        slots[slot]!.newer = nil
        if let newest { slots[newest]!.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }

    @inlinable
    mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot]!.newer, slots[slot]!.older)
        if let newer { slots[newer]!.older = older } else { newest = older }
        if let older { slots[older]!.newer = newer } else { oldest = newer }
    }

    @inlinable
    mutating func moveToNewest(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        link(slot)
    }
}
