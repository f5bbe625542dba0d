import CMicroHTTPD

/// A request body read as it arrives, for a route that streams its body (``Route/streamsBody``): chunks in order,
/// as the client sends them, with backpressure (the server stops reading from the client while the responder is
/// behind).
///
/// Nothing is read from the client until the first ``next()``: a responder that answers first (refusing the caller,
/// say) has its answer sent and the connection closed without the body being read. After an answer, whatever the
/// client still sends is read and dropped (up to the server's drain limit, then the connection is cut).
public final class RequestBodyStream: Sendable {
    /// The connection the body arrives on.
    private let context: ConnectionContext
    /// How far the buffer must drain before a paused connection reads on.
    private let lowWater: Int
    /// The body's length as declared by `Content-Length`; nil for a chunked body (count the bytes as they come).
    public let declaredLength: Int?

    init(context: ConnectionContext, lowWater: Int, declaredLength: Int?) {
        self.context = context
        self.lowWater = lowWater
        self.declaredLength = declaredLength
    }

    /// The next chunk, or nil at the end of the body. Throws `CancellationError` when the client went away or the
    /// task was cancelled; call it from one task at a time.
    public func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler { [context, lowWater] in
            try await withCheckedThrowingContinuation { continuation in
                RequestBodyStream.take(from: context, lowWater: lowWater, into: continuation)
            }
        } onCancel: { [context] in
            let reader = context.state.withLock { state in
                state.body?.failed = true
                return state.takeBodyWaiter()
            }
            reader?.resume(throwing: CancellationError())
        }
    }

    private static func take(from context: ConnectionContext, lowWater: Int,
                             into continuation: CheckedContinuation<[UInt8]?, any Error>) {
        let take = context.state.withLock { state -> ConnectionState.BodyTake in
            let take = state.takeBody(lowWater: lowWater)
            // The socket stays watched across resumes: see `ServerCore.startStreamingBody`.
            if case .wait = take { state.body?.waiter = BodyWaiter(continuation) }
            return take
        }
        switch take {
        case .chunk(let chunk, let resume):
            if resume { MHD_resume_connection(context.connection) }
            continuation.resume(returning: chunk)
        case .wait(let resume):
            if resume { MHD_resume_connection(context.connection) }
        case .end:
            continuation.resume(returning: nil)
        case .gone:
            continuation.resume(throwing: CancellationError())
        }
    }
}
