import Coordination

/// A listener's events for one follower, taken in runs: each ``next()`` returns everything that arrived since the
/// last, in order, waiting only when nothing did.
///
/// What `AsyncStream` plus a gathering task would do, without the task in between: the listener's task appends a
/// batch of notifications under one lock and wakes the follower once, and a follower busy with the last run finds
/// the next one waiting. One follower at a time.
public final class ListenerRuns: Sendable {
    private struct State {
        var arrived: [ListenerEvent] = []
        var waiter: CheckedContinuation<[ListenerEvent]?, Never>?
        var finished = false
        /// Called once when the runs finish, whoever finishes them (the listener stopping, or the follower's task
        /// cancelled): unsubscribes them from the listener.
        var onFinish: (@Sendable () -> Void)?
    }

    /// Guards what has arrived and not been taken, the follower's continuation while it waits, and whether the runs
    /// are over.
    private let state = Locked(State())

    init() {}

    /// Runs `action` once the runs finish (at once if they have).
    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let finishedAlready = state.withLock { state -> Bool in
            if state.finished { return true }
            state.onFinish = action
            return false
        }
        if finishedAlready { action() }
    }

    /// Everything that arrived since the last call, at least one event; nil once the runs finished and everything
    /// that arrived before was taken. Cancelling the calling task finishes the runs (what had arrived is still
    /// handed out, then nil).
    public func next() async -> [ListenerEvent]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let run = state.withLock { state -> [ListenerEvent]?? in
                    if !state.arrived.isEmpty {
                        defer { state.arrived = [] }
                        return .some(state.arrived)
                    }
                    if state.finished { return .some(nil) }
                    precondition(state.waiter == nil, "ListenerRuns has one follower at a time")
                    state.waiter = continuation
                    return nil
                }
                if let run { continuation.resume(returning: run) }
            }
        } onCancel: {
            finish()
        }
    }

    /// Adds events in their order, waking the follower if it waits.
    func append(_ events: some Collection<ListenerEvent>) {
        guard !events.isEmpty else { return }
        let woken = state.withLock { state -> (CheckedContinuation<[ListenerEvent]?, Never>, [ListenerEvent])? in
            guard !state.finished else { return nil }
            state.arrived.append(contentsOf: events)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            defer { state.arrived = [] }
            return (waiter, state.arrived)
        }
        if let (waiter, run) = woken { waiter.resume(returning: run) }
    }

    /// No event comes after this: the follower takes what is left, then gets nil. Idempotent.
    func finish() {
        let (waiter, action) = state.withLock { state -> (CheckedContinuation<[ListenerEvent]?, Never>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { state.waiter = nil; state.onFinish = nil }
            // A waiting follower has taken everything before (it waits only when nothing is left).
            return (state.waiter, state.onFinish)
        }
        waiter?.resume(returning: nil)
        action?()
    }
}
