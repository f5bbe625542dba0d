/// Suspended requests in the order they were suspended, for the disconnect monitor: each pass takes only the requests
/// that have come of age since the last one, each once, instead of walking every request in flight (with thousands of
/// slow requests, as in a storm of stream starts, that walk every few milliseconds cost several percent of the CPU).
///
/// A plain value; the monitor keeps it behind a lock, as the server's threads append and its own thread takes.
struct SuspensionQueue {
    /// A suspended request: its id and when it arrived.
    typealias Entry = (id: UInt64, since: ContinuousClock.Instant)

    private var entries: [Entry] = []
    private var head = 0

    /// Requests not yet taken.
    var count: Int { entries.count - head }

    /// Adds a request just suspended.
    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// The ids of the requests that arrived before `cutoff`, oldest first, each returned once. Stops at the first
    /// younger one: a request suspended out of order (the server's threads append in turn) waits for the next call.
    mutating func takeArrived(before cutoff: ContinuousClock.Instant) -> [UInt64] {
        var taken: [UInt64] = []
        while head < entries.count, entries[head].since < cutoff {
            taken.append(entries[head].id)
            head += 1
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return taken
    }
}
