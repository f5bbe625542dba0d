import Foundation

/// Cuts a reconnection wait short: the app says the network is back, or it came to the foreground.
///
/// Only a wait in progress is cut short; a nudge while connected does nothing, so the next drop still waits.
final class ReconnectNudge: Sendable {
    private struct State {
        /// The wait's continuation, once stored.
        var waiter: CheckedContinuation<Void, Never>?
        /// The wait in progress.
        var current: UInt64?
        /// That wait was nudged before its continuation was stored.
        var nudged = false
        /// Numbers the waits.
        var lastTicket: UInt64 = 0
    }

    /// Guards the wait in progress, its continuation and whether it was nudged.
    private let state = Protected(State())

    /// Ends the wait in progress, if any.
    func nudge() {
        let resumed = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let stored = state.waiter else {
                if state.current != nil { state.nudged = true }
                return nil
            }
            state.waiter = nil
            return stored
        }
        resumed?.resume()
    }

    /// Whether a wait is in progress (from the moment ``wait(_:)`` is called): a nudge now is not lost.
    var isWaiting: Bool {
        state.withLock { $0.current != nil }
    }

    /// Waits `delay`, less if nudged, and returns at once when the task is cancelled.
    func wait(_ delay: Duration) async {
        let mine = state.withLock { state -> UInt64 in
            state.lastTicket += 1
            state.current = state.lastTicket
            state.nudged = false
            return state.lastTicket
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // The wait may be over already (the sleep ended first), or nudged before this ran.
                    let stored = self.state.withLock { state -> Bool in
                        guard state.current == mine, !state.nudged else { return false }
                        state.waiter = continuation
                        return true
                    }
                    if !stored { continuation.resume() }
                }
            }
            await group.next()
            group.cancelAll()
            let leftover = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.current = nil
                state.nudged = false
                defer { state.waiter = nil }
                return state.waiter
            }
            leftover?.resume()
        }
    }
}
