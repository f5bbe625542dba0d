extension ServiceGroup {
    /// The group's event loop: starts the services in order, waits for a reason to stop, then shuts them down in
    /// reverse order. Returns the first failure (nil after a requested shutdown).
    func runServices(_ events: AsyncStream<Event>, _ continuation: AsyncStream<Event>.Continuation) async -> (any Error)? {
        let signals = services.map { _ in GracefulShutdown() }
        var iterator = events.makeAsyncIterator()
        var failure: (any Error)?
        var running = Set<Int>()
        // Set when the task running the group is cancelled: the services are cancelled too, not told to wind down.
        var cancelled = false
        return await withTaskGroup(of: Void.self) { group in
            if let shutdownTrigger {
                group.addTask {
                    await shutdownTrigger()
                    if !Task.isCancelled { continuation.yield(.shutdownRequested) }
                }
            }
            // Start in order, each service prepared before the next one begins.
            var stopping = false
            for (index, service) in services.enumerated() where !stopping {
                running.insert(index)
                group.addTask {
                    await GracefulShutdown.$current.withValue(signals[index]) {
                        do {
                            try await service.prepare()
                            continuation.yield(.prepared(index))
                            try await service.run()
                            continuation.yield(.finished(index, nil))
                        } catch {
                            continuation.yield(.finished(index, error))
                        }
                    }
                }
                var prepared = false
                while !prepared && !stopping {
                    switch await iterator.next() {
                    case .prepared(let which): prepared = which == index
                    case .finished(let which, let error):
                        running.remove(which)
                        failure = failure ?? stopReason(which, error)
                        stopping = true
                    case .shutdownRequested: stopping = true
                    case nil: (stopping, cancelled) = (true, true)
                    case .deadlinePassed: break
                    }
                }
            }
            if stopping {
                startFailed(failure ?? ServiceGroupError.stoppedBeforeStarted)
            } else {
                allStarted()
                // Run until asked to stop, or until a service stops on its own.
                switch await iterator.next() {
                case .finished(let which, let error):
                    running.remove(which)
                    failure = stopReason(which, error)
                case nil: cancelled = true
                case .prepared, .shutdownRequested, .deadlinePassed: break
                }
            }
            // Graceful shutdown, last started first, each one over before the next is told.
            if let deadline = gracefulShutdownDeadline, !cancelled {
                group.addTask {
                    try? await Task.sleep(for: deadline)
                    if !Task.isCancelled { continuation.yield(.deadlinePassed) }
                }
            }
            var deadlinePassed = cancelled
            for index in running.sorted(by: >) where !deadlinePassed {
                signals[index].trigger()
                while running.contains(index) && !deadlinePassed {
                    switch await iterator.next() {
                    case .finished(let which, let error):
                        running.remove(which)
                        if let error, !(error is CancellationError) {
                            failure = failure ?? ServiceGroupError.serviceFailed(service: names[which], error: error)
                        }
                    case .deadlinePassed, nil: deadlinePassed = true
                    case .prepared, .shutdownRequested: break
                    }
                }
            }
            // Past the deadline: cancel whatever still runs (and the deadline timer), and wait for it to return.
            group.cancelAll()
            await group.waitForAll()
            return failure
        }
    }

    /// Why the group stops when service `index` ended on its own.
    private func stopReason(_ index: Int, _ error: (any Error)?) -> any Error {
        guard let error else { return ServiceGroupError.serviceFinishedEarly(service: names[index]) }
        return ServiceGroupError.serviceFailed(service: names[index], error: error)
    }
}
