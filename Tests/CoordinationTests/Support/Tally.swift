import Coordination

/// A counter a test can wait on: ``reached(_:)`` returns once the count is at least the given number.
final class Tally: Sendable {
    private struct State {
        var count = 0
        var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// Guards the count and the tasks waiting for it to reach their targets.
    private let state = Locked(State())

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let ready = state.withLock { state in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.target <= count }.map(\.continuation)
            state.waiters.removeAll { $0.target <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    func reached(_ target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reachedAlready = state.withLock { state in
                if state.count >= target { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if reachedAlready { continuation.resume() }
        }
    }
}
