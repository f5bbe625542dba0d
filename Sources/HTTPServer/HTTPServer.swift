import CMicroHTTPD
import Foundation
import Coordination

/// An HTTP/1.1 server on libmicrohttpd whose requests are answered by an async `Responder`.
///
/// Each request is read in full on a libmicrohttpd thread, its connection suspended, and the responder run in
/// a Swift task; the task resumes the connection with its response. No libmicrohttpd thread waits on Swift work.
/// Call `shutdown(deadline:)` before the process exits: stopping with suspended connections would abort.
public final class HTTPServer: Sendable {
    let core: ServerCore
    /// Guards the server's lifecycle state.
    private let state = Locked<LifecycleState>(.idle)

    /// Where this server sends connections that ask for certain paths first (see ``ConnectionHandoff``).
    private let handoff: ConnectionHandoff?
    /// Guards the running daemon, its one owner: nil before start and from the moment shutdown begins (the drain
    /// takes it, and stopping consumes it), so nothing is added to a daemon once its drain has started and no daemon
    /// is stopped twice.
    private let intake = Locked<DaemonHandle?>(nil)

    private enum LifecycleState {
        case idle
        /// `port` is nil for a server without a listening socket of its own.
        case running(port: Int?, front: ConnectionFront?, sweeper: Task<Void, Never>?)
        /// The gate opens when the shutdown in progress is over.
        case stopping(Gate)
        case stopped
    }

    /// Creates a server; nothing listens until `start()`.
    ///
    /// `fromMemory`, when given, is tried first for every request without a body, on the libmicrohttpd thread: an
    /// answer known at once, or nil to run `responder` on the request as `fromMemory` left it. It must never block or
    /// wait; typically `router.answerFromMemory(_:)`. A streamed answer goes out with its opening, and its producer
    /// runs in a task of its own: started at once, or when its body says (`StreamedBody(opening:startsWhen:_:)`).
    ///
    /// `streamsBody`, when given, is asked on each request's head whether its route reads the body as it arrives
    /// (typically `router.streamsBody(_:)`); such a responder starts at once, with ``Request/bodyStream``.
    ///
    /// With a `handoff`, connections whose first request asks for one of its paths are served by its server
    /// (start that one first; until it runs, and once it stops, this server serves them).
    public init(configuration: ServerConfiguration, responder: @escaping Responder,
                fromMemory: (@Sendable (inout Request) -> Response?)? = nil,
                streamsBody: (@Sendable (inout Request) -> Bool)? = nil,
                handoff: ConnectionHandoff? = nil) {
        let handoff = configuration.listens ? handoff : nil
        // One table of connections per address for both servers: a connection accepted here may end up there.
        core = ServerCore(configuration: configuration, responder: responder, fromMemory: fromMemory, streamsBody: streamsBody,
                          addresses: handoff?.server.core.addresses ?? AddressLimits(limit: configuration.connectionsPerAddress))
        self.handoff = handoff
    }

    /// Binds and starts serving; returns the bound port (useful with port 0), or 0 for a server configured not to
    /// listen (it serves the connections another server hands it).
    @discardableResult
    public func start() throws -> Int {
        let configuration = core.configuration
        _ = sb_raise_nofile_limit()
        let fronted = configuration.listens && (handoff != nil || configuration.acceptsOnOwnThread)
        let handle = try DaemonHandle.start(configuration, core: core, listening: configuration.listens && !fronted)
        var port: Int? = configuration.listens ? Int(sb_mhd_bound_port(handle.pointer)) : nil
        var started = Optional(handle)
        intake.withLock { $0 = started.take() }
        var front: ConnectionFront?
        if fronted {
            do {
                // Without a handoff, every connection is this server's: nothing to read before handing it over.
                front = try ConnectionFront.start(configuration, handoff: handoff, addresses: core.addresses) {
                    [self] fd, address, length in adopt(fd, address, length)
                }
                port = front?.port
            } catch {
                intake.withLock { $0.take() }?.stopUnused()
                throw error
            }
        }
        core.monitor.start(registry: core.requests, streams: core.streams)
        let sweeper = configuration.headTimeout.map { timeout in
            Task { [core, intake] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    let cut = intake.withLock { $0?.cutSlowHeads(olderThan: timeout) } ?? 0
                    if cut > 0 { core.slowHeadsCut.add(cut, ordering: .relaxed) }
                }
            }
        }
        state.withLock { $0 = .running(port: port, front: front, sweeper: sweeper) }
        core.listening.store(true, ordering: .releasing)
        return port ?? 0
    }

    /// Adds a connection accepted by another server's front (already counted against its address).
    func adopt(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Adoption {
        // Under the lock, so that shutdown, which empties `intake` first, never drains a daemon still being added to.
        intake.withLock { handle in
            guard let adopted = handle?.adopt(fd, address, length) else { return .notTaking }
            return adopted ? .taken : .refused
        }
    }

    /// The bound port, or nil when not running.
    public var port: Int? {
        state.withLock { state in
            if case .running(let port, _, _) = state { return port }
            return nil
        }
    }

    /// Whether new connections are taken: from `start()` until shutdown closes the listening socket.
    public var isAcceptingConnections: Bool {
        core.listening.load(ordering: .acquiring)
    }

    /// Requests whose responder is still running.
    public var requestsInFlight: Int { core.requests.count }

    /// Responses whose body is still streaming.
    public var openStreams: Int { core.streams.count }

    /// Streamed-body writes sent to the socket directly, beside libmicrohttpd, with no resume of the connection
    /// (``ServerConfiguration/directStreamWrites``).
    public var streamWritesSentDirectly: Int { core.directStreamWrites.load(ordering: .relaxed) }

    /// Connections cut because their request head did not arrive within `headTimeout` (on a port with a handoff,
    /// by the front or by the daemon it went to).
    public var slowHeadsCut: Int { core.slowHeadsCut.load(ordering: .relaxed) + (front?.headsLate ?? 0) }

    /// Connections its daemon holds now: admitted, and not yet closed (at most `connectionLimit`).
    public var connectionsHeld: Int {
        intake.withLock { $0?.admitted } ?? 0
    }

    /// Connections accepted that are still waiting for their request head before being handed to a daemon (only
    /// with a connection handoff, whose front reads heads; 0 otherwise).
    public var connectionsWaitingForHead: Int { front?.waiting ?? 0 }

    /// Connections the front closed as it accepted them, because their address held as many as it may.
    public var connectionsRefusedByAddress: Int { Int(front?.refusedByAddress ?? 0) }

    /// The front of a server with a handoff or its own accepting thread, once started.
    private var front: ConnectionFront? {
        state.withLock { state in
            if case .running(_, let front, _) = state { return front }
            return nil
        }
    }

    /// libmicrohttpd log lines dropped because they came faster than the log budget allows.
    public var libraryLogLinesDropped: Int { core.libraryLinesDropped.load(ordering: .relaxed) }

    /// Stops accepting connections, lets running requests finish up to `deadline`, ends streamed bodies
    /// (their producers are cancelled), answers whatever is left with 503, then stops the daemon.
    ///
    /// Returns once the daemon is stopped, even when the calling task is cancelled (stopping libmicrohttpd with a
    /// connection still suspended would abort). A second call while one is in progress waits for it to finish.
    public func shutdown(deadline: Duration = .seconds(10)) async {
        enum Step { case drain(ConnectionFront?, Task<Void, Never>?, Gate), wait(Gate), none }
        let step = state.withLock { state -> Step in
            switch state {
            case .running(_, let front, let sweeper):
                let over = Gate()
                state = .stopping(over)
                return .drain(front, sweeper, over)
            case .stopping(let over): return .wait(over)
            case .idle, .stopped: return .none
            }
        }
        switch step {
        case .drain(let front, let sweeper, let over):
            // Unstructured, so that cancelling the caller cannot cut the drain short.
            await Task { [core, intake] in
                guard let handle = intake.withLock({ $0.take() }) else { return }
                await Self.drain(core, handle: handle, front: front, sweeper: sweeper, deadline: deadline)
            }.value
            state.withLock { $0 = .stopped }
            over.open()
        case .wait(let over):
            await Task { await over.wait() }.value
        case .none:
            return
        }
    }

    private static func drain(_ core: ServerCore, handle: consuming DaemonHandle, front: ConnectionFront?,
                              sweeper: Task<Void, Never>?, deadline: Duration) async {
        core.draining.store(true, ordering: .sequentiallyConsistent)
        if let front { front.stop() } else { handle.stopAccepting() }
        core.listening.store(false, ordering: .releasing)
        sweeper?.cancel()
        let end = ContinuousClock.now + deadline
        _ = await core.requests.waitUntilEmpty(until: end)
        // Streams whose producers were told to finish (a final event, say) get a moment to send it and end.
        _ = await core.streams.waitUntilEmpty(until: min(end, .now + .seconds(1)))
        for stream in core.streams.snapshot() { stream.cancelTask() }
        _ = await core.streams.waitUntilEmpty(until: min(end, .now + .seconds(1)))
        core.refusing.store(true, ordering: .sequentiallyConsistent)
        let late = Problem.serviceUnavailable("The server is shutting down.").response()
        // Repeated: a request that passed the `refusing` check just before it was set may start after a snapshot,
        // and libmicrohttpd aborts if it is stopped with a connection still suspended. Each round waits for a change
        // (a forced answer landing, a request registering or leaving the `starting` window): the generation is read
        // before looking, so a change in between ends the wait at once.
        let last = ContinuousClock.now + .seconds(1)
        repeat {
            let seen = core.drainChanges.generation
            for request in core.requests.snapshot() { request.forceRespond(late) }
            for stream in core.streams.snapshot() { stream.forceFinishStream() }
            let settled = core.starting.load(ordering: .sequentiallyConsistent) == 0
            if settled && core.requests.count == 0 && core.streams.count == 0 { break }
            await core.drainChanges.wait(after: seen, until: last)
        } while ContinuousClock.now < last
        // Over before the daemon stops: the stop frees the bookkeeping a sweep reads.
        await sweeper?.value
        if !(await handle.stop(by: max(end, .now + .seconds(1)) + .seconds(2))) {
            core.libraryLog("the daemon did not stop in time (a thread is stuck in libmicrohttpd); leaving it")
        }
        core.monitor.stop()
    }
}

/// Why the server could not start.
public enum HTTPServerError: Error, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 literal.
    case invalidHost(String)
    /// libmicrohttpd refused to start (port in use, permissions, …).
    case startFailed(port: Int, errno: Int32)

    public var description: String {
        switch self {
        case .invalidHost(let host): return "HOST '\(host)' is not an IPv4 or IPv6 address"
        case .startFailed(let port, let code): return "cannot listen on port \(port): \(String(cString: strerror(code)))"
        }
    }
}
