/// An inbox stream's events waiting to be written, at most one per interaction: a newer summary of an interaction
/// replaces the waiting one and goes to the back (the latest summary wins; nothing is dropped). Each event carries
/// the position after it, which covers only what was queued before it — so replacing never makes a position claim
/// an event the client did not get (the replaced interaction's newer change is not covered by earlier positions).
struct InboxQueue<Key: Hashable> {
    private var order: [(key: Key, bytes: [UInt8])?] = []
    private var index: [Key: Int] = [:]

    /// Events waiting.
    var count: Int { index.count }

    /// Queues `bytes` for `key`, replacing its waiting event.
    mutating func put(_ key: Key, _ bytes: [UInt8]) {
        if let old = index[key] { order[old] = nil }
        index[key] = order.count
        order.append((key, bytes))
    }

    /// Every waiting event, oldest first; the queue is then empty.
    mutating func takeAll() -> [[UInt8]] {
        let taken = order.compactMap { $0?.bytes }
        order.removeAll(keepingCapacity: true)
        index.removeAll(keepingCapacity: true)
        return taken
    }
}
