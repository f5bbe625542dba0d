import CLibPQ

extension PostgresConnection {
    /// Runs one statement with bound parameters (`$1`, `$2`, …; `nil` binds SQL NULL) and returns its rows.
    ///
    /// Cancelling the task sends a cancel request to the server, waits for the statement to stop, and throws
    /// `CancellationError`; the connection stays usable. If the task is already cancelled, nothing is sent. Pass
    /// `cancellable: false` for statements that must run regardless, such as `ROLLBACK` during cleanup.
    /// A statement that completed before the cancel reached the server returns its rows normally.
    public func query(
        _ sql: String, _ parameters: [(any PostgresEncodable)?] = [], cancellable: Bool = true
    ) async throws -> PostgresRows {
        if cancellable { try Task.checkCancellation() }
        let encoded = try QueryParameters(parameters)
        let start = ContinuousClock.now
        do {
            let result = try await run(cancellable: cancellable) { pgconn in
                encoded.withCValues { values in
                    PQsendQueryParams(pgconn, sql, Int32(encoded.count), nil, values, nil, nil, 0)
                }
            }
            observer?(ContinuousClock.now - start, true)
            return PostgresRows(result)
        } catch {
            observer?(ContinuousClock.now - start, false)
            throw error
        }
    }

    /// Runs a script of one or more `;`-separated statements, without parameters (simple query protocol), with no
    /// statement deadline.
    ///
    /// Meant for migrations and other fixed SQL; never build `sql` from input, use ``query(_:_:cancellable:)``.
    /// Outside a transaction each statement commits on its own; a failing statement skips the rest and throws.
    public func execute(script sql: String, cancellable: Bool = true) async throws {
        if cancellable { try Task.checkCancellation() }
        // No statement deadline: scripts are migrations, which may rightly take long.
        _ = try await run(cancellable: cancellable, bounded: false) { PQsendQuery($0, sql) }
    }

    /// Sends with `send`, then flushes and collects results while holding the connection's `.busy` state.
    private func run(cancellable: Bool, bounded: Bool = true, send: (OpaquePointer) -> Int32) async throws -> PostgresResult {
        let generation: UInt64
        switch state.withLock({ $0.begin() }) {
        case .fail(let kind, let message): throw PostgresError(kind, message)
        case .proceed(let next): generation = next
        }
        if cancellable && Task.isCancelled {
            endOperation(healthy: true)
            throw CancellationError()
        }
        guard send(pgconn) == 1 else {
            let error = PostgresError(connection: pgconn, "cannot send query")
            endOperation(healthy: true)
            throw error
        }
        var outcome: Result<PostgresResult, any Error>
        canceller.begin(generation)
        let watch = deadline.flatMap { bounded ? $0 : nil }.map { StatementDeadline(limit: $0.limit, grace: $0.grace, generation: generation, connection: self) }
        if cancellable {
            outcome = await withTaskCancellationHandler {
                await exchange()
            } onCancel: { [canceller] in
                canceller.cancel(generation)
            }
        } else {
            outcome = await exchange()
        }
        let deadlinePassed = watch?.stop() ?? false
        // A dead connection is discarded: waiting for its cancel (perhaps stuck on the same dead network) would only
        // hold the request.
        let cancelRequested = outcome.isFatal ? canceller.abandon(generation) : await canceller.finish(generation)
        if deadlinePassed, case .failure(let error as PostgresError) = outcome, error.isQueryCanceled {
            outcome = .failure(PostgresError(.deadline, "the statement ran past its \(deadline!.limit) deadline and was cancelled"))
        } else if cancelRequested, case .failure(let error as PostgresError) = outcome, error.isQueryCanceled {
            outcome = .failure(CancellationError())
        }
        endOperation(healthy: !outcome.isFatal)
        return try outcome.get()
    }

    /// Flushes the query out, then reads until every result is in. Server errors are drained before returning.
    private func exchange() async -> Result<PostgresResult, any Error> {
        do {
            try await flush()
            return .success(try await collectResults())
        } catch {
            return .failure(error)
        }
    }

    private func flush() async throws {
        while true {
            switch PQflush(pgconn) {
            case 0:
                return
            case 1:
                // libpq asks to read too while the server's reply may be filling the other direction.
                try await reactor.wait(socket, for: .readOrWrite)
                guard PQconsumeInput(pgconn) == 1 else { throw PostgresError(connection: pgconn, "cannot read") }
            default:
                throw PostgresError(connection: pgconn, "cannot send query")
            }
        }
    }

    private func collectResults() async throws -> PostgresResult {
        var collector = ResultCollector()
        while true {
            while PQisBusy(pgconn) == 0 {
                guard let result = PQgetResult(pgconn) else { return try collector.finish() }
                try collector.add(result)
            }
            try await reactor.wait(socket, for: .read)
            guard PQconsumeInput(pgconn) == 1 else { throw PostgresError(connection: pgconn, "cannot read") }
        }
    }
}

extension Result where Failure == any Error {
    /// Whether the failure leaves the connection unusable (an I/O failure or an unsupported protocol state).
    fileprivate var isFatal: Bool {
        guard case .failure(let error as PostgresError) = self else { return false }
        return error.kind == .connection || error.kind == .misuse
    }
}
