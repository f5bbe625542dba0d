import CMicroHTTPD
import Coordination
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The part of the server that libmicrohttpd's callbacks reach: it turns callbacks into requests and tasks,
/// and tasks' answers back into queued responses.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let responder: Responder
    /// The first try at a request without a body, on the libmicrohttpd thread (see `HTTPServer.init`).
    let fromMemory: (@Sendable (inout Request) -> Response?)?
    /// Whether a request's route reads its body as it arrives, asked on the head (see `HTTPServer.init`).
    let streamsBody: (@Sendable (inout Request) -> Bool)?
    let monitor: DisconnectMonitor
    /// Moves whenever, during shutdown, a request or stream comes or goes, or the `starting` window empties.
    let drainChanges = ChangeSignal()
    /// Requests whose responder is running (their connection is suspended).
    let requests: InFlightRegistry
    /// Responses whose body is still streaming.
    let streams: InFlightRegistry
    /// The next request's number (see `ConnectionContext.id`).
    let nextID = Atomic<UInt64>(1)
    /// Set when shutdown begins: responses carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    /// Whether the listening socket is open: set once bound, cleared once shutdown closed it.
    let listening = Atomic<Bool>(false)
    /// Set at the end of shutdown: new requests are refused at once, without suspending.
    let refusing = Atomic<Bool>(false)
    /// libmicrohttpd threads between their last `refusing` check and registering the suspended request in `requests`.
    /// With `refusing` set first (both sequentially consistent), shutdown waiting for this to be 0 and `requests`
    /// to be empty knows that no connection can still become suspended — stopping with one would abort.
    let starting = Atomic<Int>(0)
    /// Guards the budget of libmicrohttpd log lines (a token bucket: an unauthenticated client must not be able to
    /// flood the log with the library's complaints about its requests).
    private let logBudget = Locked(LogBudget())
    /// libmicrohttpd log lines dropped for being over the budget.
    let libraryLinesDropped = Atomic<Int>(0)
    /// Connections cut for not sending a complete request head in time.
    let slowHeadsCut = Atomic<Int>(0)
    /// Streamed-body writes that went to the socket directly, whole, with the connection left suspended.
    let directStreamWrites = Atomic<Int>(0)

    /// Connections per client address, shared with the server this one hands connections to, if any.
    let addresses: AddressLimits

    init(configuration: ServerConfiguration, responder: @escaping Responder,
         fromMemory: (@Sendable (inout Request) -> Response?)?,
         streamsBody: (@Sendable (inout Request) -> Bool)? = nil, addresses: AddressLimits) {
        self.configuration = configuration
        self.addresses = addresses
        self.responder = responder
        self.fromMemory = fromMemory
        self.streamsBody = streamsBody
        self.monitor = DisconnectMonitor(watchAfter: configuration.disconnectWatchAfter)
        requests = InFlightRegistry(changes: drainChanges)
        streams = InFlightRegistry(changes: drainChanges)
    }

    /// One of libmicrohttpd's own log lines: handed to the configured error log while the budget allows.
    func libraryLog(_ line: String) {
        guard let log = configuration.errorLog else { return }
        if logBudget.withLock({ $0.take(now: ContinuousClock.now) }) {
            log(line)
        } else {
            libraryLinesDropped.add(1, ordering: .relaxed)
        }
    }

    /// The access handler: called by libmicrohttpd for the head, each body chunk, the end of the body,
    /// and again after a resume.
    func access(_ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
                version: UnsafePointer<CChar>, upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let raw = slot.pointee else {
            sb_connection_watch_head_received(connection)
            let context = ConnectionContext(connection: connection, core: self, method: method, url: url)
            slot.pointee = Unmanaged.passRetained(context).toOpaque()
            // The head is read through the context, `inout`: passed by value, a class's field is copied first (a
            // local copy of the request would be one more copy of all its fields).
            if let refusal = ServerCore.refusal(ofHead: &context.request.headers, version: version) {
                return queue(refusal, for: context)
            }
            if let streamsBody, streamsBody(&context.request) {
                return startStreamingBody(context)
            }
            if let length = ServerCore.declaredLength(&context.request.headers), length > configuration.bodyLimit {
                return queue(ServerCore.tooLarge(limit: configuration.bodyLimit), for: context)
            }
            return .YES
        }
        let context = Unmanaged<ConnectionContext>.fromOpaque(raw).takeUnretainedValue()
        if context.streamsBody {
            return streamedBodyCall(context, upload: upload, uploadSize: uploadSize)
        }
        if uploadSize.pointee > 0 {
            appendBody(upload, count: uploadSize.pointee, to: context)
            uploadSize.pointee = 0
            return .YES
        }
        if let response = context.takePendingResponse() {
            return queueAnswer(response, for: context)
        }
        if context.bodyTooLarge {
            return queue(ServerCore.tooLarge(limit: configuration.bodyLimit), for: context)
        }
        if refusing.load(ordering: .relaxed) { return refuse(context) }
        if let fromMemory, context.request.body.isEmpty, let response = fromMemory(&context.request) {
            if case .stream(let body) = response.body { return startFromMemory(response, body: body, for: context) }
            return queue(response, for: context)
        }
        return startGuarded(context)
    }

    /// The answer to a head that must not be served: unsound framing, or HTTP/1.1 without `Host`. `inout` only to be
    /// read in place (see `access`); nothing is changed.
    static func refusal(ofHead headers: inout HTTPHeaders, version: UnsafePointer<CChar>) -> Response? {
        if let problem = RequestFraming.problem(in: headers) { return problem.response() }
        if !headers.contains(.host) && strcmp(version, "HTTP/1.1") == 0 {
            return Problem.badRequest("HTTP/1.1 requests must carry a Host header.").response()
        }
        return nil
    }

    /// The body length a head declares, if any. `inout` only to be read in place; nothing is changed.
    static func declaredLength(_ headers: inout HTTPHeaders) -> Int? {
        headers[.contentLength].flatMap { Int($0) }
    }

    /// Queues the responder's answer; the request leaves `requests`.
    func queueAnswer(_ response: Response, for context: ConnectionContext) -> MHD_Result {
        // Queued (a stream joins `streams`) before it leaves `requests`: the disconnect monitor must find it
        // in one or the other at every moment.
        let result = queue(response, for: context)
        requests.remove(context.id)
        context.inRequests = false
        return result
    }

    /// Starts the responder unless the server is refusing work.
    func startGuarded(_ context: ConnectionContext) -> MHD_Result {
        // Only requests about to be suspended enter the `starting` window (answers known at once never suspend,
        // so that hot path pays no shared counter); inside it, `refusing` is checked again, in order with shutdown.
        starting.add(1, ordering: .sequentiallyConsistent)
        defer {
            if starting.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
               draining.load(ordering: .sequentiallyConsistent) {
                drainChanges.notify()
            }
        }
        if refusing.load(ordering: .sequentiallyConsistent) { return refuse(context) }
        return start(context)
    }

    func refuse(_ context: ConnectionContext) -> MHD_Result {
        queue(Problem.serviceUnavailable("The server is shutting down.").response(), for: context)
    }

    private func appendBody(_ upload: UnsafePointer<CChar>?, count: Int, to context: ConnectionContext) {
        guard !context.bodyTooLarge, let upload else { return }
        if context.request.body.count + count > configuration.bodyLimit {
            context.bodyTooLarge = true
            context.request.body = []
            return
        }
        upload.withMemoryRebound(to: UInt8.self, capacity: count) {
            context.request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
        }
    }

    /// Suspends the connection and runs the responder in a task; the task resumes the connection.
    private func start(_ context: ConnectionContext) -> MHD_Result {
        context.share()
        MHD_suspend_connection(context.connection)
        context.inRequests = true
        requests.insert(context)
        context.state.withLock { $0.suspended = true }
        monitor.track(id: context.id, since: context.startedAt)
        // Created outside the lock: the task may finish (and take the lock to deliver) before this thread goes on.
        // A streamed body (an upload) is parsed, hashed and stored as it comes: heavy work, kept off the preferred
        // executor, whose thread also waits for the database's sockets.
        let task = Task.preferring(context.streamsBody ? nil : configuration.taskExecutor) {
            // The request as the server left it: written on this thread before the task was created, not after.
            let response = await self.respond(to: context.requestForResponder())
            context.deliver(response)
            if case .stream(let body) = response.body {
                // A fresh task produces the body: this one's stack grew through routing, middleware and the
                // handler's queries, and a task keeps its stack memory until it ends — for a stream, hours. It holds
                // the producing closure alone, not the opening bytes (already queued by `deliver`).
                self.startProducer(body, for: context)
            }
        }
        let cancelNow = context.state.withLock { state -> Bool in
            if state.task == nil { state.task = task } // else a stream's producer is already there
            return state.cancelRequested
        }
        if cancelNow { task.cancel() }
        return .YES
    }

    /// A streamed answer from memory, on the libmicrohttpd thread: handed over (its opening queued, its socket
    /// watched), queued, and its producer started, or set to start (see `startProducer`). The stream costs no task for
    /// the request, no suspension and no resume.
    private func startFromMemory(_ response: Response, body: StreamedBody, for context: ConnectionContext) -> MHD_Result {
        context.deliverInPlace(response)
        let result = queue(response, for: context)
        if result == .YES { startProducer(body, for: context) }
        return result
    }

    /// Starts the task that produces a streamed body, now or, for a body that says when (`StreamedBody.startsWhen`),
    /// once it has something to write; cancelled at once if the client already went away.
    private func startProducer(_ body: StreamedBody, for context: ConnectionContext) {
        guard let startsWhen = body.startsWhen else { return launchProducer(body.produce, for: context) }
        let produce = body.produce
        let launch: @Sendable () -> Void = { self.launchProducer(produce, for: context) }
        let cancelled = context.state.withLock { state -> Bool in
            if state.cancelRequested { return true }
            state.waitingProducer = launch
            return false
        }
        if cancelled { return launch() }
        // Taken under the lock, so that the body's wake-up and a cancellation start it once between them.
        startsWhen { context.state.withLock { $0.waitingProducer.take() }?() }
    }

    /// Starts the producer's task now.
    private func launchProducer(_ produce: @escaping @Sendable (BodyWriter) async throws -> Void, for context: ConnectionContext) {
        // Detached: started by whatever wakes the body (a publish, say), it inherits nothing from that caller's task.
        let producer = Task.detached { await self.produce(produce, into: context) }
        let cancelNow = context.state.withLock { state -> Bool in
            state.task = producer
            return state.cancelRequested
        }
        if cancelNow { producer.cancel() }
    }

    private func respond(to request: Request) async -> Response {
        do {
            return try await responder(request)
        } catch {
            return ErrorMiddleware.response(for: error, request: request)
        }
    }

    private func produce(_ produce: @Sendable (BodyWriter) async throws -> Void, into context: ConnectionContext) async {
        let writer = StreamWriter(context: context, highWater: configuration.streamHighWater)
        do { try await produce(writer) } catch {}
        writer.finish()
    }

    /// The request is over, whatever the reason (libmicrohttpd's completion notice).
    /// A request ended; `failed` when libmicrohttpd ended it on an error of its own.
    func completed(_ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>, failed: Bool) {
        guard let raw = slot.pointee else { return }
        slot.pointee = nil
        let context = Unmanaged<ConnectionContext>.fromOpaque(raw).takeRetainedValue()
        if failed && !context.responded {
            // libmicrohttpd answered by itself, before any responder did: say so, since no access-log line will
            // (a chunk-size line too long for its buffer gets its own HTML 500; see the README).
            libraryLog("answered by libmicrohttpd itself, not by Switchboard (malformed request body): "
                       + "\(context.request.method) \(context.request.path), request \(context.numbered())")
        }
        context.requestCompleted()
        if context.inRequests { requests.remove(context.id) }
        if context.inStreams { streams.remove(context.id) }
    }

    static func tooLarge(limit: Int) -> Response {
        Problem(status: 413, title: "Content Too Large",
                detail: "The request body exceeds the limit of \(limit) bytes.").response()
    }
}
