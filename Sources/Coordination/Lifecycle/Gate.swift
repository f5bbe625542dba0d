/// A one-way gate: tasks wait until it is opened, once and for all. Opening it again does nothing.
///
/// ``wait()`` also returns when the waiting task is cancelled, without the gate being open: check ``isOpen``
/// afterwards when the difference matters.
public final class Gate: Sendable {
    private struct State {
        var isOpen = false
        /// Waiters by id; nil while a waiter's continuation is not yet stored.
        var waiters: [UInt64: CheckedContinuation<Void, Never>?] = [:]
        var lastID: UInt64 = 0
    }

    /// Guards whether the gate is open and the continuations of the tasks waiting for it.
    private let state = Locked(State())

    /// A closed gate.
    public init() {}

    /// Whether ``open()`` was called.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate and resumes every waiter; later calls do nothing.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters.values.compactMap { $0 }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open, or as soon as the calling task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> UInt64? in
            if state.isOpen { return nil }
            state.lastID += 1
            state.waiters[state.lastID] = .some(nil)
            return state.lastID
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // The entry is gone when the gate opened or the task was cancelled before this ran.
                let stored = state.withLock { state -> Bool in
                    guard state.waiters[id] != nil, !Task.isCancelled else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !stored { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter??.resume()
        }
    }

    /// Waits until the gate opens or `deadline` passes (or the task is cancelled); returns whether it is open.
    public func wait(until deadline: ContinuousClock.Instant) async -> Bool {
        if isOpen { return true }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
        return isOpen
    }
}
