extension RequestCoordinator {
    /// A caller suspended until a load finishes, with the timer enforcing its deadline.
    @usableFromInline
    struct Waiter {
        @usableFromInline let continuation: CheckedContinuation<Value, any Error>
        @usableFromInline var timer: Task<Void, Never>?

        @inlinable
        init(continuation: CheckedContinuation<Value, any Error>) {
            self.continuation = continuation
        }

        @inlinable
        func resume(with result: Result<Value, any Error>) {
            timer?.cancel()
            continuation.resume(with: result)
        }
    }

    /// Stops a load nobody waits for any more (cancels its task, or takes its key back from a batch loader).
    @usableFromInline
    typealias StopLoad = @Sendable () -> Void

    /// One run of a caller's `load`, and the callers waiting for it.
    @usableFromInline
    struct Load {
        @usableFromInline let key: Key
        @usableFromInline let stop: StopLoad
        @usableFromInline var waiters: [WaiterID: Waiter] = [:]

        @inlinable
        init(key: Key, stop: @escaping StopLoad) {
            self.key = key
            self.stop = stop
        }
    }

    /// The slow path of ``value(for:deadline:from:_:)``: wait for the key's current load, starting one with `start`
    /// if needed. `start` runs on the actor, must arrange for ``finish(_:with:)`` to be called with the load's id
    /// (at most once), and returns how to stop the load.
    @inlinable
    func joinOrStartLoad(
        for key: Key, deadline: Duration?, start: (LoadID) -> StopLoad
    ) async throws -> Value {
        // Looked up again: a load may have filled the cache while this caller hopped onto the actor.
        if let cached = cachedValue(for: key) { return cached }
        try Task.checkCancellation()
        let loadID = currentLoad(for: key, startingWith: start)
        let waiterID = nextID()
        // No suspension between choosing the load and registering the waiter, so the load is still there.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                register(waiterID, of: loadID, continuation, deadline: deadline)
            }
        } onCancel: {
            Task { await self.dismiss(waiterID, of: loadID, with: CancellationError()) }
        }
    }

    /// The key's current load, counting the caller as joining it; or a new one, started now.
    @inlinable
    func currentLoad(for key: Key, startingWith start: (LoadID) -> StopLoad) -> LoadID {
        if let loadID = current[key] {
            shared.withLock { $0.statistics.callersJoined += 1 }
            return loadID
        }
        let loadID = nextID()
        loads[loadID] = Load(key: key, stop: start(loadID))
        current[key] = loadID
        shared.withLock { $0.statistics.loadsStarted += 1 }
        publishLoadsInFlight()
        return loadID
    }

    @inlinable
    func register(
        _ waiterID: WaiterID, of loadID: LoadID, _ continuation: CheckedContinuation<Value, any Error>,
        deadline: Duration?
    ) {
        guard loads[loadID] != nil else {
            // Unreachable while nothing suspends between choosing the load and registering; never leak, though.
            continuation.resume(throwing: CancellationError())
            return
        }
        loads[loadID]!.waiters[waiterID] = Waiter(continuation: continuation)
        // A cancellation before registration already sent its dismissal, but answering now is prompter.
        if Task.isCancelled {
            dismiss(waiterID, of: loadID, with: CancellationError())
            return
        }
        guard let deadline else { return }
        loads[loadID]!.waiters[waiterID]!.timer = Task {
            do { try await Task.sleep(for: deadline) } catch { return }
            self.dismiss(waiterID, of: loadID, with: RequestCoordinatorError.deadlineExceeded(deadline))
        }
    }

    /// Lets one caller leave with `error`, if it is still waiting; the load is cancelled once nobody waits for it.
    @inlinable
    func dismiss(_ waiterID: WaiterID, of loadID: LoadID, with error: any Error) {
        guard let waiter = loads[loadID]?.waiters.removeValue(forKey: waiterID) else { return }
        if loads[loadID]!.waiters.isEmpty, let load = loads.removeValue(forKey: loadID) {
            load.stop()
            if current[load.key] == loadID { current[load.key] = nil }
            publishLoadsInFlight()
        }
        waiter.resume(with: .failure(error))
    }

    /// Answers a load's callers; a success fills the cache only if the load is still its key's current one.
    @inlinable
    func finish(_ loadID: LoadID, with result: Result<Value, any Error>) {
        // Gone if all its callers left or cancelAll ran; the result then has nobody to go to.
        guard let load = loads.removeValue(forKey: loadID) else { return }
        publishLoadsInFlight()
        if current[load.key] == loadID {
            current[load.key] = nil
            if case .success(let value) = result { fill(value, for: load.key) }
        }
        for waiter in load.waiters.values { waiter.resume(with: result) }
    }

    @inlinable
    func fill(_ value: Value, for key: Key) {
        guard policy.maxEntries > 0 else { return }
        let limit = [policy.timeToLive, lifetime?(value)].compactMap { $0 }.min()
        if let limit, limit <= .zero { return }
        let expiry = limit.map { now() + $0 }
        shared.withLock { $0.cache.insert(value, for: key, expiry: expiry) }
    }

    @inlinable
    func publishLoadsInFlight() {
        let count = loads.count
        shared.withLock { $0.statistics.loadsInFlight = count }
    }

    @inlinable
    func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }
}
