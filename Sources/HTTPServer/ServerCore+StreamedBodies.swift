import CMicroHTTPD

/// libmicrohttpd's calls for a request whose route streams its body (see `BodyFlow` for their order).
extension ServerCore {
    /// The head: the responder starts now, before any byte of the body is read.
    ///
    /// The socket is watched for the client leaving from now until the request ends, not only while suspended:
    /// libmicrohttpd's edge-triggered loop can miss a close that came with the last bytes it read after a resume, and
    /// would then notice it only at the idle timeout, with the reader waiting all that time.
    func startStreamingBody(_ context: ConnectionContext) -> MHD_Result {
        if refusing.load(ordering: .relaxed) { return refuse(context) }
        context.streamsBody = true
        context.share()
        context.state.withLock { $0.body = BodyFlow() }
        let result = startGuarded(context)
        context.state.withLock { state in
            guard !state.watched, !state.closed, context.inRequests else { return }
            if DisconnectMonitor.add(socket: context.socket, id: context.id, to: monitor.epoll) { state.watched = true }
        }
        return result
    }

    /// Every call after the head's: a piece of body for the reader, the answer to queue, or the end of the body.
    func streamedBodyCall(_ context: ConnectionContext, upload: UnsafePointer<CChar>?,
                          uploadSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        let count = uploadSize.pointee
        if count > 0, let upload {
            return arrived(UnsafeRawBufferPointer(start: upload, count: count), for: context, uploadSize: uploadSize)
        }
        if let response = context.takePendingResponse() {
            return queueAnswer(response, for: context)
        }
        var reader: BodyWaiter?
        context.state.withLock { state in
            guard state.bodyCallWithoutData() == .ended else { return }
            reader = state.takeBodyWaiter()
            // Under the lock: the answer cannot resume the connection before it is suspended.
            MHD_suspend_connection(context.connection)
        }
        reader?.resume(returning: nil)
        return .YES
    }

    private func arrived(_ bytes: UnsafeRawBufferPointer, for context: ConnectionContext,
                         uploadSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        let highWater = configuration.streamedBodyHighWater, drainLimit = configuration.refusedBodyDrainLimit
        var chunk: [UInt8] = []
        var reader: BodyWaiter?
        let arrival = context.state.withLock { state -> ConnectionState.BodyArrival in
            let arrival = state.bodyArrived(bytes.count, highWater: highWater, drainLimit: drainLimit)
            if case .accept(let pause) = arrival {
                chunk = Array(bytes)
                reader = state.deliverBody(chunk)
                // Under the lock: a reader cannot resume the connection before it is suspended.
                if pause { MHD_suspend_connection(context.connection) }
            }
            return arrival
        }
        switch arrival {
        case .accept, .discard:
            uploadSize.pointee = 0
        case .hold:
            break
        case .cut:
            libraryLog("cut a connection that sent more than \(drainLimit) bytes of body after its answer: "
                       + "\(context.request.method) \(context.request.path), request \(context.id)")
            return .NO
        }
        reader?.resume(returning: chunk)
        return .YES
    }
}
