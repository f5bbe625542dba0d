import Foundation

/// Cuts a reconnection wait short: the app says the network is back, or it came to the foreground.
///
/// Only a wait in progress is cut short; a nudge while connected does nothing, so the next drop still waits.
final class ReconnectNudge: @unchecked Sendable {
    // @unchecked Sendable: `waiter` and `ticket` are read and written only while `lock` is held.

    /// Guards `waiter` (the wait in progress, once its continuation is stored) and `ticket` (which wait is current).
    private let lock = NSLock()
    private var waiter: CheckedContinuation<Void, Never>?
    private var ticket: UInt64 = 0

    /// Ends the wait in progress, if any.
    func nudge() {
        lock.lock()
        let current = waiter
        waiter = nil
        lock.unlock()
        current?.resume()
    }

    /// Waits `delay`, less if nudged, and returns at once when the task is cancelled.
    func wait(_ delay: Duration) async {
        let mine = withLock { () -> UInt64 in
            ticket += 1
            return ticket
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // The wait may already be over (the sleep ended first): then do not wait at all.
                    let stored = self.withLock { () -> Bool in
                        guard self.ticket == mine else { return false }
                        self.waiter = continuation
                        return true
                    }
                    if !stored { continuation.resume() }
                }
            }
            await group.next()
            group.cancelAll()
            let leftover = withLock { () -> CheckedContinuation<Void, Never>? in
                ticket += 1
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
