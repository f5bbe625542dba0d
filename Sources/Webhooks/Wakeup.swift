import Coordination

/// Wakes the delivery loop: a signal that is remembered until the loop waits (so none is lost between a claim and
/// the wait), and a wait bounded by a timeout. One waiter at a time.
///
/// A wait's timeout belongs to that wait alone: when the wait ends early, its timer is cancelled and signals
/// nothing. (A timer that signalled on cancellation would leave a signal pending after every wait, and the loop
/// would claim over and over with nothing to do.)
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Counts waits; a timer acts only on the wait it was started for.
        var wait: UInt64 = 0
        /// The wait whose timeout ran out before it began to wait.
        var expired: UInt64?
    }

    /// Guards whether a signal is pending, the loop's continuation while it waits, and which wait is current.
    private let state = Locked(State())
    /// Sleeps for a wait's timeout (throwing when cancelled): `Task.sleep` but in tests.
    private let sleep: @Sendable (Duration) async throws -> Void

    /// A wakeup whose timeouts are measured by `sleep`.
    init(sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.sleep = sleep
    }

    /// Whether the loop waits now (for tests: a signal given now ends a wait in progress).
    var isWaiting: Bool { state.withLock { $0.waiter != nil } }

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
        let current = state.withLock { state -> UInt64 in
            state.wait &+= 1
            return state.wait
        }
        let timer = Task { [self] in
            guard (try? await sleep(timeout)) != nil else { return }
            expire(current)
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending || state.expired == current {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// The timeout of wait `current` ran out: ends it if it still waits (or as soon as it begins to).
    private func expire(_ current: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.wait == current else { return nil }
            guard let waiter = state.waiter else {
                state.expired = current
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
