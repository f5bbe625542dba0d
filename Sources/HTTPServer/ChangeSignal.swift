import Coordination

/// Tells a waiting task that something it watches has changed: a generation count that moves on every change, and
/// the waiters woken when it does. Read the generation before looking at what it guards, then wait for it to move:
/// a change in between is never missed.
final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters = WaiterList()
    }

    /// Guards the generation and the tasks waiting for it to move.
    private let state = Locked(State())

    /// The current generation.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Something changed: moves the generation and wakes every waiter.
    func notify() {
        state.withLock { state in
            state.generation &+= 1
            return state.waiters.releaseAll()
        }.resumeAll()
    }

    /// Returns once the generation differs from `seen`, or at `deadline`, or when the calling task is cancelled.
    func wait(after seen: UInt64, until deadline: ContinuousClock.Instant) async {
        await state.wait(until: { $0.generation != seen }, in: \.waiters, deadline: deadline)
    }
}
