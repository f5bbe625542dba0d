import CLibPQ

extension PostgresConnection {
    /// Opens a connection without blocking a thread: libpq's `PQconnectPoll` state machine, driven by socket
    /// readiness.
    ///
    /// The session is set to `client_encoding=UTF8`, `DateStyle=ISO`, `TimeZone=UTC` and `bytea_output=hex`,
    /// which the decoders rely on; do not change them with `SET`. Throws a `.connection` error when the server
    /// refuses or ``PostgresConfiguration/connectTimeout`` passes, and `CancellationError` if the task is cancelled.
    public static func connect(_ configuration: PostgresConfiguration) async throws -> PostgresConnection {
        try await connect(configuration, reactor: configuration.reactor)
    }

    static func connect(_ configuration: PostgresConfiguration, reactor: SocketReactor) async throws
        -> PostgresConnection
    {
        try Task.checkCancellation()
        let deadline = ContinuousClock.now + configuration.connectTimeout
        var named = try ConnectionParameters(connectionString: configuration.connectionString,
                                                     settings: configuration.sessionSettings)
        if let name = configuration.applicationName, named.value(of: "application_name") == nil {
            named.set("application_name", name)
        }
        let given = named
        let parameters = try await withDeadline(deadline, configuration.connectTimeout) {
            try await given.resolvingHostName()
        }
        // One task makes the `PGconn`, polls it and hands over the connection: the pointer never crosses tasks.
        return try await withDeadline(deadline, configuration.connectTimeout) {
            try await establish(parameters, reactor: reactor, configuration: configuration)
        }
    }

    /// Starts connecting with `parameters` and drives the attempt to its end: the open connection, or the attempt
    /// closed and an error (a cancellation, when the deadline cut it short).
    private static func establish(_ parameters: ConnectionParameters, reactor: SocketReactor,
                                  configuration: PostgresConfiguration) async throws -> PostgresConnection {
        guard let pgconn = parameters.withCArrays({ PQconnectStartParams($0, $1, 0) }) else {
            throw PostgresError(.connection, "cannot allocate a connection")
        }
        do {
            guard PQstatus(pgconn) != CONNECTION_BAD else { throw PostgresError(connection: pgconn, "cannot connect") }
            try await pollUntilConnected(pgconn, reactor: reactor)
            guard PQsetnonblocking(pgconn, 1) == 0 else {
                throw PostgresError(connection: pgconn, "cannot switch to non-blocking mode")
            }
            return PostgresConnection(established: pgconn, reactor: reactor, observer: configuration.queryObserver,
                                      deadline: configuration.statementDeadline.map { ($0, configuration.cancelGrace) })
        } catch {
            if PQsocket(pgconn) >= 0 { reactor.deregister(PQsocket(pgconn)) }
            PQfinish(pgconn)
            throw error
        }
    }

    /// Drives `PQconnectPoll`, waiting for whatever readiness it asks for. libpq may switch sockets between
    /// attempts (several hosts, TLS fallback), so the socket is read afresh each time.
    private static func pollUntilConnected(_ pgconn: OpaquePointer, reactor: SocketReactor) async throws {
        var status = PGRES_POLLING_WRITING
        while true {
            switch status {
            case PGRES_POLLING_OK:
                return
            case PGRES_POLLING_READING:
                try await reactor.wait(PQsocket(pgconn), for: .read, cancellable: true)
            case PGRES_POLLING_WRITING:
                try await reactor.wait(PQsocket(pgconn), for: .write, cancellable: true)
            default:
                throw PostgresError(connection: pgconn, "cannot connect")
            }
            status = PQconnectPoll(pgconn)
        }
    }

    /// Runs `operation`, cancelling it and throwing a `.connection` error if it is still running at `deadline`.
    private static func withDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask(operation: operation)
            group.addTask {
                try await Task.sleep(until: deadline)
                throw PostgresError(.connection, "connecting timed out after \(timeout)")
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let value = result { return value }
            }
            throw CancellationError()
        }
    }
}
