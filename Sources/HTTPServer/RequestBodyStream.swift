import CMicroHTTPD
import Coordination

/// A request body read as it arrives, for a route that streams its body (``Route/streamsBody``): chunks in order,
/// as the client sends them, with backpressure (the server stops reading from the client while the responder is
/// behind).
///
/// Nothing is read from the client until the first ``next()``: a responder that answers first (refusing the caller,
/// say) has its answer sent and the connection closed without the body being read. After an answer, whatever the
/// client still sends is read and dropped (up to the server's drain limit, then the connection is cut).
public final class RequestBodyStream: Sendable {
    private enum Source {
        case connection(ConnectionContext, lowWater: Int)
        case chunks(Locked<[[UInt8]]>)
    }

    private let source: Source
    /// The body's length as declared by `Content-Length`; nil for a chunked body (count the bytes as they come).
    public let declaredLength: Int?

    init(context: ConnectionContext, lowWater: Int, declaredLength: Int?) {
        source = .connection(context, lowWater: lowWater)
        self.declaredLength = declaredLength
    }

    /// A body made of `chunks`, for handlers run without a server (tests).
    public init(chunks: [[UInt8]], declaredLength: Int? = nil) {
        source = .chunks(Locked(chunks))
        self.declaredLength = declaredLength
    }

    /// The next chunk, or nil at the end of the body. Throws `CancellationError` when the client went away or the
    /// task was cancelled; call it from one task at a time.
    public func next() async throws -> [UInt8]? {
        switch source {
        case .chunks(let chunks):
            return chunks.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        case .connection(let context, let lowWater):
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    RequestBodyStream.take(from: context, lowWater: lowWater, into: continuation)
                }
            } onCancel: {
                let reader = context.state.withLock { state in
                    state.body?.failed = true
                    return state.takeBodyWaiter()
                }
                reader?.resume(throwing: CancellationError())
            }
        }
    }

    private static func take(from context: ConnectionContext, lowWater: Int,
                             into continuation: CheckedContinuation<[UInt8]?, any Error>) {
        let take = context.state.withLock { state -> ConnectionState.BodyTake in
            let take = state.takeBody(lowWater: lowWater)
            // The socket stays watched across resumes: see `ServerCore.startStreamingBody`.
            if case .wait = take { state.body?.waiter = continuation }
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
