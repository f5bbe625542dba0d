import CMicroHTTPD
import Coordination
#if canImport(Glibc)
import Glibc
#endif

/// One request on one libmicrohttpd connection: its head and body as they arrive, then the state shared
/// between the libmicrohttpd thread, the responder's task and the disconnect monitor.
///
/// `@unchecked Sendable`: the head/body fields are written only on the connection's libmicrohttpd thread
/// before the task starts (task creation orders those writes before the task reads them), `inRequests` and
/// `inStreams` are written and read on that thread alone, and everything shared afterwards lives in `state`, behind
/// its lock. `state` itself is made on that thread too, by `share()`, before the context is first handed to another
/// thread (a task, a registry, the disconnect monitor), and never changes afterwards.
final class ConnectionContext: @unchecked Sendable {
    /// The request's number, unique in its server: the key of the registries and of the disconnect monitor. Given
    /// by `share()` (0 until then), so a request never shared takes no number from the counter the server's threads
    /// share: an atomic add on a line of memory both cores would pass back and forth.
    @exclusivity(unchecked) private(set) var id: UInt64 = 0
    let connection: OpaquePointer
    unowned let core: ServerCore
    /// When the request's head arrived.
    var startedAt: ContinuousClock.Instant { request.arrival }

    // Written on the libmicrohttpd thread only, before the task starts. These and the two flags below are not checked
    // for overlapping access at run time (each access is a plain read or write on that one thread; the checks were
    // several runtime calls per request).
    @exclusivity(unchecked) var request: Request
    @exclusivity(unchecked) var bodyTooLarge = false
    /// Whether the route reads the body as it arrives (the responder starts on the head; see `BodyFlow`).
    @exclusivity(unchecked) var streamsBody = false
    /// Whether the request is in the server's `requests` registry now (suspended, its responder running), and whether
    /// it is in `streams` (its body streaming). Written and read on the libmicrohttpd thread only, where every insert
    /// and removal happens: a completion removes the request only from where it still is, so one answered at once,
    /// or resumed and answered, takes no registry lock when it ends.
    @exclusivity(unchecked) var inRequests = false
    @exclusivity(unchecked) var inStreams = false

    /// Guards the shared request/stream state (see `ConnectionState` for the invariant); nil until `share()`. A
    /// request answered at once on the libmicrohttpd thread (a page from memory) never shares anything, and then pays
    /// for no lock: an object and a mutex made and freed, and two lockings, on the hottest path there is.
    @exclusivity(unchecked) private var sharedState: Locked<ConnectionState>?

    /// The shared state. Only after `share()`: every caller runs once the request has been handed to another thread,
    /// or is the libmicrohttpd thread after it made the state.
    var state: Locked<ConnectionState> { sharedState! }

    /// Makes the shared state, on the libmicrohttpd thread, before the request is suspended, its body streamed or its
    /// answer streamed: before any other thread can reach this context.
    func share() {
        guard sharedState == nil else { return }
        numbered()
        sharedState = Locked(ConnectionState())
    }

    /// The request's number, given now if it has none (on the libmicrohttpd thread): for a log line about a request
    /// never shared.
    @discardableResult
    func numbered() -> UInt64 {
        if id == 0 { id = core.nextID.wrappingAdd(1, ordering: .relaxed).oldValue }
        return id
    }

    /// The connection's socket, read once on the libmicrohttpd thread (other threads must not call into a
    /// connection that may already be gone). Valid only while the request has not completed.
    let socket: Int32

    /// The context of a request whose head libmicrohttpd has just read: the head is read into `request` in place.
    init(connection: OpaquePointer, core: ServerCore, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>) {
        self.connection = connection
        self.socket = sb_mhd_connection_fd(connection)
        self.core = core
        self.request = Request()
        MHDRequestReader.read(connection, method: method, url: url, into: &request)
    }

    /// The request as the responder gets it: with a body stream reading from this connection when the route streams
    /// its body (made here, in the task, so that the context does not hold a stream that holds the context).
    func requestForResponder() -> Request {
        guard streamsBody else { return request }
        var request = request
        request.bodyStream = RequestBodyStream(context: self, lowWater: core.configuration.streamedBodyHighWater / 4,
                                               declaredLength: ServerCore.declaredLength(&request.headers))
        return request
    }

    /// Called by the responder's task with its answer: hands it over and resumes the connection.
    func deliver(_ response: Response) {
        let resume = state.withLock { state -> Bool in
            // Only when this call hands the response over is the request still open, and its socket too.
            guard state.respond(response) else { return false }
            watchWhileStreamingLocked(&state)
            return true
        }
        if resume { MHD_resume_connection(connection) }
    }

    /// Hands over a streamed answer given on the libmicrohttpd thread, the connection never suspended (`deliver`
    /// resumes, and watches the socket only when it does): its opening is queued and its socket watched.
    func deliverInPlace(_ response: Response) {
        share()
        state.withLock { state in
            _ = state.respond(response)
            state.pendingResponse = nil
            watchWhileStreamingLocked(&state)
        }
    }

    /// A stream may sit idle for hours between writes: its socket stays watched for the whole of it, so a client that
    /// leaves is noticed at once, not at the next write. Any other answer's socket is watched no longer.
    private func watchWhileStreamingLocked(_ state: inout ConnectionState) {
        if state.streaming {
            if !state.watched, DisconnectMonitor.add(socket: socket, id: id, to: core.monitor.epoll) {
                state.watched = true
            }
        } else {
            unwatchLocked(&state)
        }
    }

    /// Whether a responder's answer was handed over (never for a request never shared: an answer given at once on
    /// the libmicrohttpd thread is queued directly).
    var responded: Bool {
        sharedState?.withLock { $0.responded } ?? false
    }

    /// Takes the response waiting to be queued, on the libmicrohttpd thread (none for a request never shared).
    func takePendingResponse() -> Response? {
        sharedState?.withLock { $0.pendingResponse.take() } ?? nil
    }

    /// The client went away while the request was suspended, or during a stream: cancel its task (a stream's
    /// producer, which then ends the response).
    func clientWentAway() {
        let (cancellation, reader) = state.withLock { state -> (ConnectionState.Cancellation?, BodyWaiter?) in
            unwatchLocked(&state)
            if state.body != nil && !state.closed && !state.suspended {
                // libmicrohttpd is reading this body and may not notice the close (see
                // `ServerCore.startStreamingBody`): shutting the socket down wakes it, and it ends the request. The
                // socket is still open: `closed` is set, under this lock, before libmicrohttpd closes it.
                shutdown(socket, Int32(SHUT_RDWR))
            }
            state.body?.failed = true
            let reader = state.takeBodyWaiter()
            guard !state.responded || state.streaming else { return (nil, reader) }
            return (state.requestCancellation(), reader)
        }
        reader?.resume(throwing: CancellationError())
        cancellation?.perform()
    }

    /// The request is over (libmicrohttpd said so): no more writes, cancel whatever still runs. A request never
    /// shared has nothing running.
    func requestCompleted() {
        guard let state = sharedState else { return }
        let (cancellation, writer, reader) = state.withLock { state -> (ConnectionState.Cancellation, WriterWaiter?, BodyWaiter?) in
            state.closed = true
            unwatchLocked(&state)
            return (state.requestCancellation(), state.writerWaiting.take(), state.takeBodyWaiter())
        }
        writer?.resume(throwing: CancellationError())
        reader?.resume(throwing: CancellationError())
        cancellation.perform()
    }

    /// Registers the socket with the monitor when the request is still suspended (called by the monitor).
    func watchIfStillSuspended(epoll: Int32) {
        state.withLock { state in
            guard state.suspended, !state.responded, !state.watched else { return }
            if DisconnectMonitor.add(socket: socket, id: id, to: epoll) { state.watched = true }
        }
    }

    /// Must be called under the lock, before a non-streaming connection is resumed and when the request completes
    /// (its socket may be closed and reused afterwards). A watched socket is open: both happen under this lock.
    func unwatchLocked(_ state: inout ConnectionState) {
        guard state.watched else { return }
        state.watched = false
        DisconnectMonitor.remove(socket: socket, from: core.monitor.epoll)
    }
}

extension ConnectionContext {
    /// Shutdown: answers a request that is still running with `response` (its own answer, if it comes, is dropped).
    func forceRespond(_ response: Response) {
        state.withLock { $0.requestCancellation() }.perform()
        deliver(response)
    }

    /// Shutdown: ends a streamed body now, whatever its producer is doing.
    func forceFinishStream() {
        let (cancellation, resume) = state.withLock { state -> (ConnectionState.Cancellation, Bool) in
            state.producerFinished = true
            return (state.requestCancellation(), state.takeSuspension())
        }
        cancellation.perform()
        if resume { MHD_resume_connection(connection) }
    }

    /// Shutdown: asks a streamed body's producer to stop (it is cancelled and then finishes the stream).
    func cancelTask() {
        state.withLock { $0.requestCancellation() }.perform()
    }
}
