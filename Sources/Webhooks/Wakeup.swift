import Coordination

/// Wakes the delivery loop: a signal that is remembered until the loop waits (so none is lost between a claim and
/// the wait), and a wait bounded by a timeout. One waiter at a time.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// Guards whether a signal is pending and the loop's continuation while it waits.
    private let state = Locked(State())

    /// Wakes the waiter, or the next one if none waits now.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once if one is pending), or after `timeout`.
    func wait(timeout: Duration) async {
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            signal()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        // A signal that raced with the timer's would otherwise wake the next wait at once: harmless, but drop it.
        state.withLock { $0.pending = false }
    }
}
