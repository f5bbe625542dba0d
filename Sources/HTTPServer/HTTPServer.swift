import CMicroHTTPD
import Foundation
import Coordination

/// An HTTP/1.1 server on libmicrohttpd whose requests are answered by an async `Responder`.
///
/// Each request is read in full on a libmicrohttpd thread, its connection suspended, and the responder run in
/// a Swift task; the task resumes the connection with its response. No libmicrohttpd thread waits on Swift work.
/// Call `shutdown(deadline:)` before the process exits: stopping with suspended connections would abort.
public final class HTTPServer: Sendable {
    private let core: ServerCore
    /// Guards the server's lifecycle state.
    private let state = Locked<LifecycleState>(.idle)

    private enum LifecycleState {
        case idle
        case running(DaemonHandle, port: Int, sweeper: Task<Void, Never>?)
        case stopping
        case stopped
    }

    /// Creates a server; nothing listens until `start()`.
    ///
    /// `immediate`, when given, is tried first for every request without a body, on the libmicrohttpd thread
    /// (see `ImmediateResponder`); typically `router.respondImmediately(to:)`.
    public init(configuration: ServerConfiguration, responder: @escaping Responder, immediate: ImmediateResponder? = nil) {
        core = ServerCore(configuration: configuration, responder: responder, immediate: immediate)
    }

    /// Binds and starts serving; returns the bound port (useful with port 0).
    @discardableResult
    public func start() throws -> Int {
        let configuration = core.configuration
        _ = sb_raise_nofile_limit()
        let handle = try DaemonHandle.start(configuration, core: core)
        let port = Int(sb_mhd_bound_port(handle.pointer))
        core.monitor.start(registry: core.requests, streams: core.streams)
        let sweeper = configuration.headTimeout.map { timeout in
            Task { [core] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    let cut = handle.cutSlowHeads(olderThan: timeout)
                    if cut > 0 { core.slowHeadsCut.add(cut, ordering: .relaxed) }
                }
            }
        }
        state.withLock { $0 = .running(handle, port: port, sweeper: sweeper) }
        return port
    }

    /// The bound port, or nil when not running.
    public var port: Int? {
        state.withLock { state in
            if case .running(_, let port, _) = state { return port }
            return nil
        }
    }

    /// Requests whose responder is still running.
    public var requestsInFlight: Int { core.requests.count }

    /// Responses whose body is still streaming.
    public var openStreams: Int { core.streams.count }

    /// Connections cut because their request head did not arrive within `headTimeout`.
    public var slowHeadsCut: Int { core.slowHeadsCut.load(ordering: .relaxed) }

    /// libmicrohttpd log lines dropped because they came faster than the log budget allows.
    public var libraryLogLinesDropped: Int { core.libraryLinesDropped.load(ordering: .relaxed) }

    /// Stops accepting connections, lets running requests finish up to `deadline`, ends streamed bodies
    /// (their producers are cancelled), answers whatever is left with 503, then stops the daemon.
    public func shutdown(deadline: Duration = .seconds(10)) async {
        let running = state.withLock { state -> (DaemonHandle, Task<Void, Never>?)? in
            guard case .running(let handle, _, let sweeper) = state else { return nil }
            state = .stopping
            return (handle, sweeper)
        }
        guard let (handle, sweeper) = running else { return }
        core.draining.store(true, ordering: .relaxed)
        handle.stopAccepting()
        sweeper?.cancel()
        let end = ContinuousClock.now + deadline
        await waitUntil(end) { core.requests.count == 0 }
        // Streams whose producers were told to finish (a final event, say) get a moment to send it and end.
        await waitUntil(min(end, .now + .seconds(1))) { core.streams.count == 0 }
        for stream in core.streams.snapshot() { stream.cancelTask() }
        await waitUntil(min(end, .now + .seconds(1))) { core.streams.count == 0 }
        core.refusing.store(true, ordering: .sequentiallyConsistent)
        let late = Problem.serviceUnavailable("The server is shutting down.").response()
        // Repeated: a request that passed the `refusing` check just before it was set may start after a snapshot,
        // and libmicrohttpd aborts if it is stopped with a connection still suspended.
        let last = ContinuousClock.now + .seconds(1)
        repeat {
            for request in core.requests.snapshot() { request.forceRespond(late) }
            for stream in core.streams.snapshot() { stream.forceFinishStream() }
            let settled = core.starting.load(ordering: .sequentiallyConsistent) == 0
            if settled && core.requests.count == 0 && core.streams.count == 0 { break }
            try? await Task.sleep(for: .milliseconds(5))
        } while ContinuousClock.now < last
        // Over before the daemon stops: the stop frees the bookkeeping a sweep reads.
        await sweeper?.value
        await handle.stop()
        core.monitor.stop()
        state.withLock { $0 = .stopped }
    }

    private func waitUntil(_ end: ContinuousClock.Instant, _ done: () -> Bool) async {
        while !done() && ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
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
