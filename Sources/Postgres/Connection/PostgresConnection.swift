import Coordination
import CLibPQ
import Glibc

/// One non-blocking libpq connection. Waiting for the server suspends the task; no thread is ever blocked.
///
/// A connection runs one statement at a time: use it from one task at a time (a second concurrent caller gets a
/// `.misuse` error), or share a ``PostgresPool`` instead. Open one with ``connect(_:)``; ``close()`` it when done.
///
/// `@unchecked Sendable`: the `PGconn` is touched only by the operation that holds the `.busy` state in `state`
/// (a lock), or by `deinit`; so at most one thread uses it at any time.
public final class PostgresConnection: @unchecked Sendable {
    let pgconn: OpaquePointer
    let socket: Int32
    let reactor: SocketReactor
    let canceller: QueryCanceller
    /// Touched only through libpq calls, so under the same `.busy` rule as `pgconn`; freed after `PQfinish`.
    let notices = ServerNotices()
    /// Guards the lifecycle; holding `.busy` grants exclusive use of `pgconn`.
    let state = Locked(ConnectionStateMachine())
    /// Guards the names of the statements prepared on this connection (a lock, not the `.busy` rule: the name is
    /// looked up before the operation begins).
    let prepared = Locked(PreparedNames())
    /// Told each statement's duration and outcome.
    let observer: (@Sendable (Duration, Bool) -> Void)?
    /// Watches each bounded statement's deadline and the grace its cancel gets before the connection is given up
    /// (nil when statements have no deadline).
    let statementDeadline: StatementDeadline?

    /// The server process serving this connection, as `pg_stat_activity.pid` and `pg_terminate_backend` see it.
    public let backendPID: Int32

    /// Wraps an established, non-blocking `PGconn`; takes ownership.
    init(established pgconn: OpaquePointer, reactor: SocketReactor, observer: (@Sendable (Duration, Bool) -> Void)? = nil,
         deadline: (limit: Duration, grace: Duration)? = nil) {
        self.pgconn = pgconn
        self.observer = observer
        let socket = PQsocket(pgconn)
        self.socket = socket
        self.reactor = reactor
        let canceller = QueryCanceller(connection: pgconn)
        self.canceller = canceller
        self.backendPID = PQbackendPID(pgconn)
        self.statementDeadline = deadline.map {
            StatementDeadline(limit: $0.limit, grace: $0.grace, canceller: canceller, reactor: reactor, socket: socket)
        }
        // Replaces libpq's default, which prints every notice to stderr ("relation already exists, skipping").
        notices.install(on: pgconn)
    }

    deinit {
        if state.withLock({ $0.state }) != .closed { release() }
    }

    /// Whether the connection can no longer run queries: closed, or broken by a fatal error.
    ///
    /// A backend that died while the connection sat idle is only noticed by ``isAlive()`` or the next query.
    public var isBroken: Bool {
        state.withLock { $0.isBroken }
    }

    /// Closes the connection; a running query is left to finish and the connection closes after it. Idempotent.
    public func close() {
        if state.withLock({ $0.close() }) == .closeConnection { release() }
    }

    /// Checks, without a round trip, that an idle connection's server is still there.
    ///
    /// Reads whatever the server sent (without waiting) and checks libpq's status, so a backend ended by
    /// `pg_terminate_backend` or a restart is noticed before a query is sent. Returns `true` while another task
    /// is using the connection, and `false` once it is broken or closed.
    public func isAlive() -> Bool {
        switch state.withLock({ $0.begin() }) {
        case .fail(let kind, _):
            return kind == .misuse
        case .proceed:
            var healthy = true
            var reads = 0
            // Data and end-of-file can arrive separately; a few reads see both without ever blocking.
            while healthy && reads < 4 && socketHasInput() {
                healthy = PQconsumeInput(pgconn) == 1
                reads += 1
            }
            // Parsing what arrived surfaces a goodbye sent before the socket closed (see `ServerNotices`).
            if healthy && reads > 0 { _ = PQisBusy(pgconn) }
            healthy = healthy && !notices.sawFatal && PQstatus(pgconn) == CONNECTION_OK
            endOperation(healthy: healthy)
            return healthy
        }
    }

    /// Whether the connection is healthy and outside any transaction, so it can be handed to another user.
    func isReusable() -> Bool {
        guard case .proceed = state.withLock({ $0.begin() }) else { return false }
        let reusable = PQstatus(pgconn) == CONNECTION_OK && PQtransactionStatus(pgconn) == PQTRANS_IDLE
        endOperation(healthy: reusable)
        return reusable
    }

    /// Gives up the `.busy` state; closes the connection if `close()` was called meanwhile.
    func endOperation(healthy: Bool) {
        let healthy = healthy && !notices.sawFatal && PQstatus(pgconn) == CONNECTION_OK
        if state.withLock({ $0.end(healthy: healthy) }) == .closeConnection { release() }
    }

    private func socketHasInput() -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Deregisters the socket before libpq closes it, then frees everything.
    private func release() {
        // libpq closes the socket itself when it sees the connection drop; the number may belong to another by now.
        if PQsocket(pgconn) == socket { reactor.deregister(socket) }
        canceller.close()
        PQfinish(pgconn)
    }
}
