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
            return observed(result, since: start)
        } catch {
            throw observed(error, since: start)
        }
    }

    /// Tells the observer how long a statement that succeeded took; its rows.
    @inline(never)
    private func observed(_ result: PostgresResult, since start: ContinuousClock.Instant) -> PostgresRows {
        observer?(ContinuousClock.now - start, true)
        return PostgresRows(result)
    }

    /// Tells the observer how long a statement that failed took; its error.
    @inline(never)
    private func observed(_ error: any Error, since start: ContinuousClock.Instant) -> any Error {
        observer?(ContinuousClock.now - start, false)
        return error
    }

    /// Runs a ``PreparedStatement`` with bound parameters: prepared on this connection the first time (one extra
    /// round trip), then executed by name, so the server neither parses nor plans it again. Otherwise as
    /// ``query(_:_:cancellable:)``.
    public func query(
        _ statement: PreparedStatement, _ parameters: [(any PostgresEncodable)?] = [], cancellable: Bool = true
    ) async throws -> PostgresRows {
        if cancellable { try Task.checkCancellation() }
        let encoded = try QueryParameters(parameters)
        let start = ContinuousClock.now
        do {
            let result: PostgresResult
            do {
                result = try await runPrepared(statement, encoded, cancellable: cancellable)
            } catch {
                // Outside a transaction nothing happened: run it again, prepared afresh. Inside one, the transaction
                // is aborted and the caller must start over.
                guard forgetsPrepared(statement, after: error), isReusable() else { throw error }
                result = try await runPrepared(statement, encoded, cancellable: cancellable)
            }
            return observed(result, since: start)
        } catch {
            throw observed(error, since: start)
        }
    }

    /// Whether `error` says the server no longer knows `statement` as this connection prepared it; if so, the
    /// statement is forgotten here, to be prepared afresh.
    @inline(never)
    private func forgetsPrepared(_ statement: PreparedStatement, after error: any Error) -> Bool {
        guard let error = error as? PostgresError, error.invalidatesPreparedStatement else { return false }
        prepared.withLock { $0.forget(statement) }
        return true
    }

    /// Out of line: the caller runs it in two places (the first try and the retry), and each inlined copy would add
    /// its locals to the caller's frame.
    @inline(never)
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
    ///
    /// Every query's task runs this, so its async frame is kept small: what does not wait (starting, judging the
    /// ending, building an error) is done in synchronous functions kept out of line. An error value built here would
    /// take a slot of its own in the frame, and a frame over the task allocator's slab (984 bytes) costs a `malloc`.
    private func run(cancellable: Bool, bounded: Bool = true, send: (OpaquePointer) -> Int32) async throws -> PostgresResult {
        let started = try start(cancellable: cancellable, bounded: bounded, send: send)
        let generation = started.generation
        let exchanged: Exchanged
        if cancellable {
            exchanged = await withTaskCancellationHandler {
                await exchange(started.machine)
            } onCancel: { [canceller] in
                canceller.cancel(generation)
            }
        } else {
            exchanged = await exchange(started.machine)
        }
        let deadlinePassed = started.watched ? statementDeadline?.stop() ?? false : false
        let fatal = exchanged.isFatal
        // A dead connection is discarded: waiting for its cancel (perhaps stuck on the same dead network) would only
        // hold the request.
        let cancelRequested: Bool
        if fatal {
            cancelRequested = canceller.abandon(generation)
        } else if let settled = canceller.finishUnlessInFlight(generation) {
            cancelRequested = settled
        } else {
            cancelRequested = await canceller.finish(generation)
        }
        endOperation(healthy: !fatal)
        return try resolved(exchanged, cancelRequested: cancelRequested, deadlinePassed: deadlinePassed)
    }

    /// A query sent, its exchange about to be driven.
    private struct Started {
        let generation: UInt64
        let machine: QueryStateMachine
        /// Whether the statement deadline watches it.
        let watched: Bool
    }

    /// Takes the connection's `.busy` state and sends with `send`; throws (leaving the connection as it was) when
    /// the connection is not usable, the task is cancelled before anything was sent, or the send fails.
    @inline(never)
    private func start(cancellable: Bool, bounded: Bool, send: (OpaquePointer) -> Int32) throws -> Started {
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
        guard machine.sent(send(pgconn) == 1) == .flush else {
            let error = PostgresError(connection: pgconn, "cannot send query")
            endOperation(healthy: true)
            throw error
        }
        canceller.begin(generation)
        let watched = bounded && statementDeadline != nil
        if watched { statementDeadline?.begin(generation) }
        return Started(generation: generation, machine: machine, watched: watched)
    }

    /// The query's rows, or what to throw, once the exchange, the cancel and the deadline are settled.
    @inline(never)
    private func resolved(_ exchanged: Exchanged, cancelRequested: Bool, deadlinePassed: Bool) throws -> PostgresResult {
        let serverCancelled: Bool
        if case .failure(let error as PostgresError) = exchanged.outcome { serverCancelled = error.isQueryCanceled } else { serverCancelled = false }
        switch QueryResolution.resolve(exchanged.ending, serverCancelled: serverCancelled, cancelRequested: cancelRequested,
                                       deadlinePassed: deadlinePassed) {
        case .outcome: return try exchanged.outcome.get()
        case .cancelled: throw CancellationError()
        case .deadline: throw PostgresError(.deadline, "the statement ran past its \(statementDeadline!.limit) deadline and was cancelled")
        }
    }

    /// How an exchange ended, and its rows or error.
    private struct Exchanged {
        let ending: QueryStateMachine.Ending
        let outcome: Result<PostgresResult, any Error>

        /// Whether the connection must be discarded: it was lost, or an I/O failure or an unsupported protocol
        /// state broke it.
        var isFatal: Bool { QueryResolution.isFatal(ending) || outcome.isFatal }
    }

    /// Performs the machine's actions — flush, wait, consume, read — until it finishes, starting with the flush
    /// after the send. Each failing libpq call records its error here; the machine only decides what comes next.
    private func exchange(_ machine: QueryStateMachine) async -> Exchanged {
        var machine = machine
        var collector = ResultCollector()
        var failure: (any Error)?
        var action = QueryStateMachine.Action.flush
        while true {
            switch action {
            case .send:
                preconditionFailure("the query is sent before the exchange")
            case .flush:
                let code = PQflush(pgconn)
                if code < 0 { failure = connectionFailure("cannot send query") }
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
                if !ok { failure = connectionFailure("cannot read") }
                action = machine.consumed(ok)
            case .readResults:
                action = readAvailableResults(&machine, into: &collector, failure: &failure)
            case .finish(let ending):
                return Exchanged(ending: ending, outcome: ending == .resultsRead ? collector.outcome() : .failure(failure ?? Self.exchangeFailed()))
            }
        }
    }

    /// The error libpq reports for a failed `context` on this connection (out of line: see ``run(cancellable:bounded:send:)``).
    @inline(never)
    private func connectionFailure(_ context: String) -> any Error {
        PostgresError(connection: pgconn, context)
    }

    @inline(never)
    private static func exchangeFailed() -> any Error {
        PostgresError(.connection, "the exchange failed")
    }

    /// Takes every result libpq has complete, without waiting.
    @inline(never)
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
