/// Actions due at instants, earliest first: the reactor's timers (statement deadlines, the pool's waiter timer),
/// each costing a heap insertion and removal, not a task or a thread. A pure value: the caller says what time it is.
///
/// A cancelled action leaves its entry in the heap until its time comes (popping it then is cheaper than searching).
struct DeadlineHeap<Action> {
    private var heap: [(at: ContinuousClock.Instant, ticket: UInt64)] = []
    private var pending: [UInt64: Action] = [:]
    private var lastTicket: UInt64 = 0

    /// Adds `action`, due at `instant`; returns its ticket, and whether it is now the earliest entry (the thread
    /// waiting for the earliest must then be woken to wait less).
    mutating func schedule(at instant: ContinuousClock.Instant, _ action: Action) -> (ticket: UInt64, isEarliest: Bool) {
        lastTicket &+= 1
        pending[lastTicket] = action
        heap.append((instant, lastTicket))
        siftUp(heap.count - 1)
        return (lastTicket, heap[0].ticket == lastTicket)
    }

    /// Forgets the action of `ticket` if it has not been taken; returns whether it was still pending.
    @discardableResult
    mutating func cancel(_ ticket: UInt64) -> Bool {
        pending.removeValue(forKey: ticket) != nil
    }

    /// When the earliest entry is due (it may be a cancelled one); nil when there is none.
    var nextInstant: ContinuousClock.Instant? { heap.first?.at }

    /// Actions still pending (not run, not cancelled).
    var count: Int { pending.count }

    /// Takes every action due at or before `now`, earliest first.
    mutating func takeDue(now: ContinuousClock.Instant) -> [Action] {
        var due: [Action] = []
        while let first = heap.first, first.at <= now {
            popFirst()
            if let action = pending.removeValue(forKey: first.ticket) { due.append(action) }
        }
        return due
    }

    private mutating func popFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var index = 0
        while true {
            let left = 2 * index + 1, right = left + 1
            var smallest = index
            if left < heap.count && heap[left].at < heap[smallest].at { smallest = left }
            if right < heap.count && heap[right].at < heap[smallest].at { smallest = right }
            if smallest == index { return }
            heap.swapAt(index, smallest)
            index = smallest
        }
    }

    private mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            if heap[parent].at <= heap[index].at { return }
            heap.swapAt(parent, index)
            index = parent
        }
    }
}
