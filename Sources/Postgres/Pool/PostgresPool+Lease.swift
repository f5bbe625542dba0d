extension PostgresPool {
    /// Waits for a grant, then turns it into a live connection: verifies an idle one, or opens a new one.
    func lease() async throws -> PostgresConnection {
        let grant = try await waitForGrant()
        if case .connection(let connection) = grant {
            if connection.isAlive() { return connection }
            connection.close()
        }
        do {
            return try await PostgresConnection.connect(configuration)
        } catch {
            releaseSlot()
            throw error
        }
    }

    /// Queues behind earlier callers if the pool is full; throws on timeout, cancellation or pool close.
    private func waitForGrant() async throws -> Grant {
        // A connection or slot free at once is taken under the lock: no continuation, no cancellation handler.
        try Task.checkCancellation()
        if let grant = state.withLock({ $0.machine.acquireNow() }) { return grant }
        let waiter = state.withLock { state in
            state.lastWaiterID += 1
            return state.lastWaiterID
        }
        let deadline = ContinuousClock.now + acquireTimeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                // Checked under the lock so a cancellation handler that ran before the waiter was queued is not lost.
                let action = state.withLock { state -> PoolStateMachine<PostgresConnection>.AcquireAction? in
                    if Task.isCancelled { return nil }
                    let action = state.machine.acquire(waiter: waiter, deadline: deadline)
                    if case .wait = action { state.continuations[waiter] = continuation }
                    return action
                }
                switch action {
                case nil:
                    continuation.resume(throwing: CancellationError())
                case .grant(let grant):
                    continuation.resume(returning: grant)
                case .fail(let kind):
                    continuation.resume(throwing: PostgresError(kind, "the pool is closed"))
                case .wait(let armTimer):
                    if let armTimer { armWaiterTimer(at: armTimer) }
                }
            }
        } onCancel: {
            abandon(waiter, with: CancellationError())
        }
    }

    /// Arms the pool's one waiter timer (a timer of the ``SocketReactor``, not a task per waiter).
    private func armWaiterTimer(at deadline: ContinuousClock.Instant) {
        _ = configuration.reactor.schedule(after: max(.zero, deadline - .now)) { [weak self] in self?.waiterTimerFired() }
    }

    /// Fails the waiters whose deadline passed, and re-arms the timer for the next one, as the machine decides.
    private func waiterTimerFired() {
        let (expired, next) = state.withLock { state in
            let (expired, next) = state.machine.timerFired(at: .now)
            return (expired.map { state.take($0) }, next)
        }
        if let next { armWaiterTimer(at: next) }
        for continuation in expired {
            continuation?.resume(throwing: PostgresError(.poolTimeout, "no connection became free within \(acquireTimeout)"))
        }
    }

    /// Fails a waiter that is still queued; one that already got a grant keeps it.
    private func abandon(_ waiter: UInt64, with error: any Error) {
        let continuation = state.withLock { state in
            state.machine.removeWaiter(waiter) ? state.take(waiter) : nil
        }
        continuation?.resume(throwing: error)
    }
}
