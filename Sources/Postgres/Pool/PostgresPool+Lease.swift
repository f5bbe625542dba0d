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
        let waiter = state.withLock { state in
            state.lastWaiterID += 1
            return state.lastWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                // Checked under the lock so a cancellation handler that ran before the waiter was queued is not lost.
                let action = state.withLock { state -> PoolStateMachine<PostgresConnection>.AcquireAction? in
                    if Task.isCancelled { return nil }
                    let action = state.machine.acquire(waiter: waiter)
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
                case .wait:
                    startTimer(for: waiter)
                }
            }
        } onCancel: {
            abandon(waiter, with: CancellationError())
        }
    }

    private func startTimer(for waiter: UInt64) {
        let timeout = acquireTimeout
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            self.abandon(waiter, with: PostgresError(.poolTimeout, "no connection became free within \(timeout)"))
        }
        let alreadyResumed = state.withLock { state in
            guard state.continuations[waiter] != nil else { return true }
            state.timers[waiter] = timer
            return false
        }
        if alreadyResumed { timer.cancel() }
    }

    /// Fails a waiter that is still queued; one that already got a grant keeps it.
    private func abandon(_ waiter: UInt64, with error: any Error) {
        let (continuation, timer) = state.withLock { state in
            state.machine.removeWaiter(waiter) ? state.take(waiter) : (nil, nil)
        }
        timer?.cancel()
        continuation?.resume(throwing: error)
    }
}
