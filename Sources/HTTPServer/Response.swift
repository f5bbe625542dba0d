/// An HTTP response: status, headers and a body that is either bytes or a stream.
public struct Response: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields; `Content-Length` and `Date` are added by the server.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// A response body: complete bytes, or a stream of chunks written as they come.
    public enum Body: Sendable {
        /// The whole body, known up front.
        case bytes([UInt8])
        /// The whole body, known up front and shared with other responses (a cached page): sent from where it is,
        /// without a copy per response.
        case shared(SharedBytes)
        /// A body produced over time (sent chunked); see `StreamedBody`.
        case stream(StreamedBody)
    }

    /// Creates a response with a complete body.
    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// Creates a response whose body is bytes shared with other responses, sent without copying them.
    public init(status: Int, headers: HTTPHeaders = [:], shared body: SharedBytes) {
        self.status = status
        self.headers = headers
        self.body = .shared(body)
    }

    /// Creates a response whose body is streamed.
    public init(status: Int, headers: HTTPHeaders = [:], stream: StreamedBody) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    /// The body's bytes when it is not a stream, else nil.
    public var bodyBytes: [UInt8]? {
        switch body {
        case .bytes(let bytes): bytes
        case .shared(let bytes): bytes.array
        case .stream: nil
        }
    }
}

/// A body written over time: an async sequence of byte chunks, sent as they come.
///
/// Writing applies backpressure: the producer is suspended while the connection's send buffer is full.
/// The sequence ends the response when it finishes; when the client goes away, the producing task is
/// cancelled, so a producer must stop when cancelled.
public struct StreamedBody: Sendable {
    /// Bytes known when the response is made: queued before the response goes out, so they leave with its head
    /// (no wake-up of the connection for them) and come before anything `produce` writes.
    let opening: [UInt8]
    /// Writes the body into `writer`; returns when the body is complete.
    let produce: @Sendable (BodyWriter) async throws -> Void
    /// The body's length when known up front: sent as `Content-Length` (not chunked), and `produce` must write
    /// exactly that many bytes (a producer that stops short ends the connection, so the client sees the cut).
    let length: Int?
    /// When set, the producer's task is not started with the response: the server calls this once with a function
    /// that starts it, and the body calls that function when `produce` has something to write (see
    /// ``init(opening:startsWhen:_:)``). The server also starts it itself to end the stream (the client left,
    /// shutdown).
    let startsWhen: ProducerStart?

    /// Given the function that starts a body's producer, calls it (once, on any thread) when the producer has
    /// something to write.
    public typealias ProducerStart = @Sendable (_ start: @escaping @Sendable () -> Void) -> Void

    /// A body that yields each chunk of `sequence` in turn.
    public init<Chunks: AsyncSequence & Sendable>(_ sequence: Chunks) where Chunks.Element == [UInt8] {
        opening = []
        length = nil
        startsWhen = nil
        produce = { writer in
            for try await chunk in sequence {
                try await writer.write(chunk)
            }
        }
    }

    /// A body written by a closure, for producers that are not naturally sequences; `opening`, when given, is sent
    /// first, with the response's head.
    public init(opening: [UInt8] = [], _ produce: @escaping @Sendable (BodyWriter) async throws -> Void) {
        self.opening = opening
        self.produce = produce
        length = nil
        startsWhen = nil
    }

    /// A body written by a closure that starts only once `startsWhen` says it has something to write: a stream that
    /// waits for events, say, holds no task while it has none. `opening` is sent first, with the response's head.
    public init(opening: [UInt8], startsWhen: @escaping ProducerStart,
                _ produce: @escaping @Sendable (BodyWriter) async throws -> Void) {
        self.opening = opening
        self.produce = produce
        self.startsWhen = startsWhen
        length = nil
    }

    /// A body of exactly `length` bytes written by a closure (a file read from storage, say), sent with
    /// `Content-Length`.
    public init(length: Int, _ produce: @escaping @Sendable (BodyWriter) async throws -> Void) {
        opening = []
        self.produce = produce
        self.length = length
        startsWhen = nil
    }
}

/// The sink a streamed body writes into.
public protocol BodyWriter: Sendable {
    /// Queues `bytes` for sending; suspends while the send buffer is over its limit.
    /// Throws when the client has gone away.
    func write(_ bytes: [UInt8]) async throws
}
