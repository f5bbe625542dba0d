/// A one-way gate: tasks wait until it is opened, once and for all. Opening it again does nothing.
///
/// ``wait()`` also returns when the waiting task is cancelled, without the gate being open: check ``isOpen``
/// afterwards when the difference matters.
public final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters = WaiterList()
    }

    /// Guards whether the gate is open and the continuations of the tasks waiting for it.
    private let state = Locked(State())

    /// A closed gate.
    public init() {}

    /// Whether ``open()`` was called.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate and resumes every waiter; later calls do nothing.
    public func open() {
        state.withLock { state in
            state.isOpen = true
            return state.waiters.releaseAll()
        }.resumeAll()
    }

    /// Returns once the gate is open, or as soon as the calling task is cancelled.
    public func wait() async {
        await state.wait(until: { $0.isOpen }, in: \.waiters)
    }

    /// Waits until the gate opens or `deadline` passes (or the task is cancelled); returns whether it is open.
    public func wait(until deadline: ContinuousClock.Instant) async -> Bool {
        await state.wait(until: { $0.isOpen }, in: \.waiters, deadline: deadline)
        return isOpen
    }
}
