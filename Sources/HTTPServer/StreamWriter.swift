import CMicroHTTPD

/// The `BodyWriter` of one streamed response: queues bytes in the connection's buffer and wakes the
/// libmicrohttpd thread, suspending the producer while too much is queued.
struct StreamWriter: BodyWriter {
    let context: ConnectionContext
    let highWater: Int

    func write(_ bytes: [UInt8]) async throws {
        if bytes.isEmpty { return }
        try Task.checkCancellation()
        let resume = try context.state.withLock { state -> Bool in
            if state.closed { throw CancellationError() }
            return state.append(bytes)
        }
        if resume { MHD_resume_connection(context.connection) }
        try await waitForRoom()
    }

    /// Suspends while more than `highWater` bytes wait to be sent; throws when the client has gone.
    private func waitForRoom() async throws {
        let full = context.state.withLock { $0.buffered > highWater && !$0.closed }
        guard full else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                context.state.withLock { state in
                    if state.closed || Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else if state.buffered <= highWater {
                        continuation.resume()
                    } else {
                        state.writerWaiting = continuation
                    }
                }
            }
        } onCancel: {
            let writer = context.state.withLock { state in
                defer { state.writerWaiting = nil }
                return state.writerWaiting
            }
            writer?.resume(throwing: CancellationError())
        }
    }

    /// The producer is done: let the reader end the response once the buffer is sent.
    func finish() {
        let resume = context.state.withLock { state -> Bool in
            state.producerFinished = true
            return state.takeSuspension()
        }
        if resume { MHD_resume_connection(context.connection) }
    }
}
