/// What one request's connection is doing, shared by the libmicrohttpd thread that owns it, the Swift task
/// that answers it, and the disconnect monitor. Always accessed under `ConnectionContext.state`'s lock.
///
/// The invariant that matters: `suspended` mirrors libmicrohttpd's view exactly, and `MHD_resume_connection`
/// is called only by whoever flips it from true to false.
struct ConnectionState {
    /// Whether the connection is suspended in libmicrohttpd right now.
    var suspended = false
    /// A response ready to be queued by the libmicrohttpd thread.
    var pendingResponse: Response?
    /// Whether a response has been handed over (later ones, e.g. after a forced 503, are dropped).
    var responded = false
    /// The task running the responder (and then producing a streamed body).
    var task: Task<Void, Never>?
    /// Someone asked to cancel the task (perhaps before its handle was stored).
    var cancelRequested = false
    /// A streamed body's producer not started yet, waiting for something to write (`StreamedBody.startsWhen`): it
    /// starts the producer's task. Whoever takes it calls it: the body's wake-up, or a cancellation (the producer,
    /// cancelled as it starts, ends the stream).
    var waitingProducer: (@Sendable () -> Void)?
    /// The socket is registered with the disconnect monitor.
    var watched = false
    /// The request finished or the client went away: no more writes.
    var closed = false

    // Streamed body
    var streaming = false
    var buffer: [UInt8] = []
    var readOffset = 0
    var producerFinished = false
    var writerWaiting: WriterWaiter?
    /// Whether a writer may send to the socket itself (see `StreamWriter`): only for a body delimited by the
    /// connection's end, never chunk-encoded, so its bytes fit between libmicrohttpd's own writes.
    var directWrites = DirectWrites.off
    /// The content reader suspended the connection, finding nothing to send: libmicrohttpd has sent every byte it was
    /// given and will not write again until resumed, so the socket is the writer's to use meanwhile.
    var suspendedByReader = false

    /// Whether a streamed body's writer may send to the socket itself.
    enum DirectWrites {
        /// No: a chunked body, or the socket was found unfit (corked).
        case off
        /// Yes, once the socket is readied for it (`TCP_NODELAY`), at the first such write.
        case untried
        /// Yes.
        case ready
    }

    /// The request body as it streams in, for a route that reads it as it comes (nil: read in full first).
    var body: BodyFlow?

    var buffered: Int { buffer.count - readOffset }

    /// Records that the task must stop (also for a task not stored yet) and returns what to do about it outside the
    /// lock.
    mutating func requestCancellation() -> Cancellation {
        cancelRequested = true
        return Cancellation(task: task, waitingProducer: waitingProducer.take())
    }

    /// A cancellation to carry out outside the lock: the running task is cancelled, and a producer still waiting to
    /// start is started (it finds the cancellation as it begins, and ends the stream).
    struct Cancellation {
        let task: Task<Void, Never>?
        let waitingProducer: (@Sendable () -> Void)?

        func perform() {
            task?.cancel()
            waitingProducer?()
        }
    }

    /// Stores the responder's answer; returns whether the caller must resume the connection.
    mutating func respond(_ response: Response) -> Bool {
        guard !responded, !closed else { return false }
        responded = true
        pendingResponse = response
        if case .stream(let body) = response.body {
            streaming = true
            // Queued before the connection is resumed: the first read finds them, so they leave with the head.
            buffer = body.opening
            readOffset = 0
        }
        return takeSuspension()
    }

    /// Flips `suspended` to false; true when it was set (the caller then owns the resume).
    mutating func takeSuspension() -> Bool {
        guard suspended else { return false }
        suspended = false
        suspendedByReader = false
        return true
    }

    /// Appends streamed bytes; returns whether the caller must resume the connection.
    mutating func append(_ bytes: some Collection<UInt8>) -> Bool {
        if readOffset > 0 && readOffset >= buffer.count / 2 {
            buffer.removeFirst(readOffset)
            readOffset = 0
        }
        buffer.append(contentsOf: bytes)
        return takeSuspension()
    }

    /// What the content reader should do when libmicrohttpd asks for up to `max` bytes.
    enum ReadAction: Equatable {
        case copy(Int)
        case endOfStream
        case error
        case suspend
    }

    mutating func read(max: Int) -> ReadAction {
        let available = buffered
        if available > 0 { return .copy(min(max, available)) }
        if producerFinished { return .endOfStream }
        if closed { return .error }
        suspended = true
        suspendedByReader = true
        return .suspend
    }

    /// Marks `count` bytes as sent; returns a waiting writer to wake when the buffer has drained enough.
    mutating func consume(_ count: Int, lowWater: Int) -> WriterWaiter? {
        readOffset += count
        if readOffset == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16 * 1024)
            readOffset = 0
        }
        guard buffered <= lowWater, let writer = writerWaiting else { return nil }
        writerWaiting = nil
        return writer
    }
}
