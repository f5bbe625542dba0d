import Coordination
import Foundation

/// One thread that runs actions at deadlines, for every connection of the process: statement deadlines cost a heap
/// insertion and removal each, not a task or a thread per statement. Actions run on the timer's thread and must be
/// quick (they hand work off; they never block).
final class DeadlineTimer: @unchecked Sendable { // `pending`, `heap` and `nextID` are guarded by `condition`
    /// The process's timer.
    static let shared = DeadlineTimer()

    /// Guards the heap of deadlines and the actions still pending; signalled when an earlier deadline arrives.
    private let condition = NSCondition()
    private var heap: [(at: ContinuousClock.Instant, id: UInt64)] = []
    private var pending: [UInt64: @Sendable () -> Void] = [:]
    private var nextID: UInt64 = 0

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "postgres-deadlines"
        thread.start()
    }

    /// Runs `action` once `delay` has passed, unless ``cancel(_:)`` comes first; returns the ticket for that.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let at = ContinuousClock.now + delay
        condition.lock()
        nextID &+= 1
        let id = nextID
        pending[id] = action
        heap.append((at, id))
        siftUp(heap.count - 1)
        if heap[0].id == id { condition.signal() }
        condition.unlock()
        return id
    }

    /// Forgets the action of `ticket` if it has not run; returns whether it was still pending.
    @discardableResult
    func cancel(_ ticket: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return pending.removeValue(forKey: ticket) != nil
    }

    private func run() {
        condition.lock()
        while true {
            // Cancelled entries stay in the heap until their time: popping them then is cheaper than searching.
            guard let first = heap.first else {
                condition.wait()
                continue
            }
            let now = ContinuousClock.now
            if first.at > now {
                // At most a second at a time, then the monotonic clock decides again: the wait itself is measured on
                // the wall clock, which may jump.
                let wait = min(first.at - now, .seconds(1))
                let seconds = wait.inSeconds
                _ = condition.wait(until: Date().addingTimeInterval(seconds))
                continue
            }
            popFirst()
            guard let action = pending.removeValue(forKey: first.id) else { continue }
            condition.unlock()
            action()
            condition.lock()
        }
    }

    private func popFirst() {
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

    private func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            if heap[parent].at <= heap[index].at { return }
            heap.swapAt(parent, index)
            index = parent
        }
    }
}
