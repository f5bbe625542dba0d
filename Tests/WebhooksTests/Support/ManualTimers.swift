import Coordination

/// Sleeps that end only when the test says so (or when their task is cancelled), for code that takes a `sleep`.
final class ManualTimers: Sendable {
    private struct State {
        var sleeping: [UInt64: CheckedContinuation<Void, any Error>?] = [:]
        var lastID: UInt64 = 0
        var started = 0
    }

    /// Guards the sleeps in progress and how many were started.
    private let state = Locked(State())

    /// The `sleep` to inject: returns when ``fireAll()`` runs, throws `CancellationError` when its task is cancelled.
    @Sendable func sleep(_ duration: Duration) async throws {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            state.started += 1
            state.sleeping[state.lastID] = .some(nil)
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let stored = state.withLock { state -> Bool in
                    guard state.sleeping[id] != nil, !Task.isCancelled else { return false }
                    state.sleeping[id] = continuation
                    return true
                }
                if !stored { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleeping.removeValue(forKey: id) }
            sleeper??.resume(throwing: CancellationError())
        }
    }

    /// Sleeps started so far.
    var started: Int { state.withLock { $0.started } }

    /// Sleeps in progress (started, not yet fired nor cancelled).
    var sleeping: Int { state.withLock { $0.sleeping.count } }

    /// Ends every sleep in progress that has begun to wait; returns how many.
    @discardableResult
    func fireAll() -> Int {
        let sleepers = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let ready = state.sleeping.compactMap { id, sleeper in sleeper.map { (id, $0) } }
            for (id, _) in ready { state.sleeping[id] = nil }
            return ready.map(\.1)
        }
        for sleeper in sleepers { sleeper.resume() }
        return sleepers.count
    }
}
