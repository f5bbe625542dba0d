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
        return try await observed {
            try await run(cancellable: cancellable) { pgconn in
                encoded.withCValues { values in
                    PQsendQueryParams(pgconn, sql, Int32(encoded.count), nil, values, nil, nil, 0)
                }
            }
        }
    }

    /// Runs `body`, telling the observer how long it took and whether it succeeded.
    private func observed(_ body: () async throws -> PostgresResult) async throws -> PostgresRows {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            observer?(ContinuousClock.now - start, true)
            return PostgresRows(result)
        } catch {
            observer?(ContinuousClock.now - start, false)
            throw error
        }
    }

    /// Runs a ``PreparedStatement`` with bound parameters: prepared on this connection the first time (one extra
    /// round trip), then executed by name, so the server neither parses nor plans it again. Otherwise as
    /// ``query(_:_:cancellable:)``.
    public func query(
        _ statement: PreparedStatement, _ parameters: [(any PostgresEncodable)?] = [], cancellable: Bool = true
    ) async throws -> PostgresRows {
        if cancellable { try Task.checkCancellation() }
        let encoded = try QueryParameters(parameters)
        return try await observed {
            do {
                return try await runPrepared(statement, encoded, cancellable: cancellable)
            } catch let error as PostgresError where error.invalidatesPreparedStatement {
                prepared.withLock { $0.forget(statement) }
                // Outside a transaction nothing happened: run it again, prepared afresh. Inside one, the transaction
                // is aborted and the caller must start over.
                guard isReusable() else { throw error }
                return try await runPrepared(statement, encoded, cancellable: cancellable)
            }
        }
    }

    private func runPrepared(_ statement: PreparedStatement, _ encoded: QueryParameters, cancellable: Bool) async throws
        -> PostgresResult
    {
        let known = prepared.withLock { $0.name(of: statement) }
        let name = known ?? prepared.withLock { $0.newName(for: statement) }
        if known == nil {
            _ = try await run(cancellable: cancellable) { pgconn in
                PQsendPrepare(pgconn, name, statement.sql, Int32(encoded.count), nil)
            }
            prepared.withLock { $0.prepared(statement, as: name) }
        }
        return try await run(cancellable: cancellable) { pgconn in
            encoded.withCValues { values in
                PQsendQueryPrepared(pgconn, name, Int32(encoded.count), values, nil, nil, 0)
            }
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

    /// Sends with `send`, then drives the exchange (``QueryStateMachine``) while holding the connection's `.busy`
    /// state; cancellation and the statement deadline are collected on the side and resolved at the end.
    private func run(cancellable: Bool, bounded: Bool = true, send: (OpaquePointer) -> Int32) async throws -> PostgresResult {
        let generation: UInt64
        switch state.withLock({ $0.begin() }) {
        case .fail(let kind, let message): throw PostgresError(kind, message)
        case .proceed(let next): generation = next
        }
        var machine = QueryStateMachine()
        guard case .send = machine.start(cancellable: cancellable, taskCancelled: Task.isCancelled) else {
            endOperation(healthy: true)
            throw CancellationError()
        }
        let first = machine.sent(send(pgconn) == 1)
        guard first == .flush else {
            let error = PostgresError(connection: pgconn, "cannot send query")
            endOperation(healthy: true)
            throw error
        }
        canceller.begin(generation)
        let watch = deadline.flatMap { bounded ? $0 : nil }.map {
            StatementDeadline(limit: $0.limit, grace: $0.grace, generation: generation, connection: self)
        }
        let exchanged: Exchanged
        if cancellable {
            exchanged = await withTaskCancellationHandler {
                await exchange(machine, first)
            } onCancel: { [canceller] in
                canceller.cancel(generation)
            }
        } else {
            exchanged = await exchange(machine, first)
        }
        let deadlinePassed = watch?.stop() ?? false
        let fatal = QueryResolution.isFatal(exchanged.ending) || exchanged.outcome.isFatal
        // A dead connection is discarded: waiting for its cancel (perhaps stuck on the same dead network) would only
        // hold the request.
        let cancelRequested = fatal ? canceller.abandon(generation) : await canceller.finish(generation)
        endOperation(healthy: !fatal)
        let serverCancelled: Bool
        if case .failure(let error as PostgresError) = exchanged.outcome { serverCancelled = error.isQueryCanceled } else { serverCancelled = false }
        switch QueryResolution.resolve(exchanged.ending, serverCancelled: serverCancelled, cancelRequested: cancelRequested,
                                       deadlinePassed: deadlinePassed) {
        case .outcome: return try exchanged.outcome.get()
        case .cancelled: throw CancellationError()
        case .deadline: throw PostgresError(.deadline, "the statement ran past its \(deadline!.limit) deadline and was cancelled")
        }
    }

    /// How an exchange ended, and its rows or error.
    private struct Exchanged {
        let ending: QueryStateMachine.Ending
        let outcome: Result<PostgresResult, any Error>
    }

    /// Performs the machine's actions — flush, wait, consume, read — until it finishes. Each failing libpq call
    /// records its error here; the machine only decides what comes next.
    private func exchange(_ machine: QueryStateMachine, _ first: QueryStateMachine.Action) async -> Exchanged {
        var machine = machine
        var collector = ResultCollector()
        var failure: (any Error)?
        var action = first
        while true {
            switch action {
            case .send:
                preconditionFailure("the query is sent before the exchange")
            case .flush:
                let code = PQflush(pgconn)
                if code < 0 { failure = PostgresError(connection: pgconn, "cannot send query") }
                action = machine.flushed(code)
            case .wait(let interest):
                do {
                    try await reactor.wait(socket, for: interest)
                    action = machine.waited(true)
                } catch {
                    failure = error
                    action = machine.waited(false)
                }
            case .consumeInput:
                let ok = PQconsumeInput(pgconn) == 1
                if !ok { failure = PostgresError(connection: pgconn, "cannot read") }
                action = machine.consumed(ok)
            case .readResults:
                action = readAvailableResults(&machine, into: &collector, failure: &failure)
            case .finish(let ending):
                guard ending == .resultsRead else {
                    return Exchanged(ending: ending, outcome: .failure(failure ?? PostgresError(.connection, "the exchange failed")))
                }
                return Exchanged(ending: ending, outcome: Result { () throws(PostgresError) in try collector.finish() }.mapError { $0 })
            }
        }
    }

    /// Takes every result libpq has complete, without waiting.
    private func readAvailableResults(_ machine: inout QueryStateMachine, into collector: inout ResultCollector,
                                      failure: inout (any Error)?) -> QueryStateMachine.Action {
        while PQisBusy(pgconn) == 0 {
            guard let result = PQgetResult(pgconn) else { return machine.resultsEnded() }
            do {
                try collector.add(result)
            } catch {
                failure = error
                return machine.resultRefused()
            }
        }
        return machine.wouldBlock()
    }
}

extension Result where Failure == any Error {
    /// Whether the failure leaves the connection unusable (an I/O failure or an unsupported protocol state).
    fileprivate var isFatal: Bool {
        guard case .failure(let error as PostgresError) = self else { return false }
        return error.kind == .connection || error.kind == .misuse
    }
}
