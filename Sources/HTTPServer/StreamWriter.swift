import CMicroHTTPD
import Synchronization

/// The `BodyWriter` of one streamed response: queues bytes in the connection's buffer and wakes the
/// libmicrohttpd thread, suspending the producer while too much is queued. On a daemon with `directStreamWrites`,
/// bytes written while libmicrohttpd idles the connection go to its socket directly (see `sendDirectly`).
struct StreamWriter: BodyWriter {
    let context: ConnectionContext
    let highWater: Int

    func write(_ bytes: [UInt8]) async throws {
        if bytes.isEmpty { return }
        try Task.checkCancellation()
        let socket = context.socket
        let resume = try context.state.withLock { state -> Bool in
            if state.closed { throw CancellationError() }
            if state.suspendedByReader && state.buffered == 0 && state.directWrites != .off {
                let sent = Self.sendDirectly(bytes, socket: socket, state: &state)
                if sent == bytes.count {  // all on its way; the connection stays suspended
                    context.core.directStreamWrites.add(1, ordering: .relaxed)
                    return false
                }
                return state.append(bytes[sent...])
            }
            return state.append(bytes)
        }
        if resume { MHD_resume_connection(context.connection) }
        try await waitForRoom()
    }

    /// Sends what the socket takes of `bytes` now, beside libmicrohttpd, which has the connection suspended with
    /// nothing left to send (a body delimited by the connection's end: its bytes need no framing). An idle stream's
    /// event then costs one `send`, not a resume: no wake-up of libmicrohttpd's thread, no walk over its suspended
    /// connections, no reader call, no suspension again. What the socket does not take (full, or broken) is queued,
    /// and libmicrohttpd sends it, or finds the connection broken, once resumed. Returns the count sent.
    private static func sendDirectly(_ bytes: [UInt8], socket: Int32, state: inout ConnectionState) -> Int {
        if state.directWrites == .untried {
            state.directWrites = sb_socket_prepare_direct_writes(socket) == 0 ? .ready : .off
            if state.directWrites == .off { return 0 }
        }
        let sent = bytes.withUnsafeBytes { sb_socket_send_now(socket, $0.baseAddress, $0.count) }
        return max(0, Int(sent))
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
                        state.writerWaiting = WriterWaiter(continuation)
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
