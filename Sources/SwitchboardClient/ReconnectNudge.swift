import Foundation

/// Cuts a reconnection wait short: the app says the network is back, or it came to the foreground.
///
/// Only a wait in progress is cut short; a nudge while connected does nothing, so the next drop still waits.
final class ReconnectNudge: @unchecked Sendable {
    // @unchecked Sendable: the fields below are read and written only while `lock` is held.

    /// Guards `waiter` (the wait's continuation, once stored), `current` (the wait in progress), `nudged` (that
    /// wait was nudged before its continuation was stored) and `lastTicket` (numbers the waits).
    private let lock = NSLock()
    private var waiter: CheckedContinuation<Void, Never>?
    private var current: UInt64?
    private var nudged = false
    private var lastTicket: UInt64 = 0

    /// Ends the wait in progress, if any.
    func nudge() {
        let resumed = withLock { () -> CheckedContinuation<Void, Never>? in
            guard let stored = waiter else {
                if current != nil { nudged = true }
                return nil
            }
            waiter = nil
            return stored
        }
        resumed?.resume()
    }

    /// Whether a wait is in progress (from the moment ``wait(_:)`` is called): a nudge now is not lost.
    var isWaiting: Bool {
        withLock { current != nil }
    }

    /// Waits `delay`, less if nudged, and returns at once when the task is cancelled.
    func wait(_ delay: Duration) async {
        let mine = withLock { () -> UInt64 in
            lastTicket += 1
            current = lastTicket
            nudged = false
            return lastTicket
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // The wait may be over already (the sleep ended first), or nudged before this ran.
                    let stored = self.withLock { () -> Bool in
                        guard self.current == mine, !self.nudged else { return false }
                        self.waiter = continuation
                        return true
                    }
                    if !stored { continuation.resume() }
                }
            }
            await group.next()
            group.cancelAll()
            let leftover = withLock { () -> CheckedContinuation<Void, Never>? in
                current = nil
                nudged = false
                defer { waiter = nil }
                return waiter
            }
            leftover?.resume()
        }
    }

    private func withLock<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
