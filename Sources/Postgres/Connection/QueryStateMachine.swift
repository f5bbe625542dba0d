/// One statement's exchange with the server, as a pure value: which libpq call comes next, and what the caller is
/// finally told.
///
/// The driver (`PostgresConnection.run`) performs each action and reports what libpq answered as the next event;
/// this type never touches libpq, a socket or a clock, so every path — success, server error, cancellation before
/// the send, a cancel that arrives mid-result or after completion, the statement deadline, a lost connection — is
/// unit-tested without I/O. The sequence is libpq's asynchronous protocol: send; flush until the query is out
/// (reading meanwhile when libpq asks, so a server filling the other direction cannot deadlock us); then read
/// results while `PQisBusy` says they are complete, waiting for the socket whenever it says they are not, until
/// `PQgetResult` returns NULL. Cancellation and the deadline arrive from other threads as flags the driver collects
/// (``QueryCanceller``, ``StatementDeadline``) and meet this machine in ``resolve(_:)``.
struct QueryStateMachine: Sendable, Equatable {
    enum State: Sendable, Equatable {
        /// Nothing sent yet.
        case initial
        /// The query is handed to libpq and being flushed to the server.
        case flushing
        /// The query is out; results are being read.
        case reading
        /// The exchange is over; only ``resolve(_:)`` is left.
        case done
    }

    /// What the driver does next.
    enum Action: Sendable, Equatable {
        /// `PQsendQueryParams` (or `PQsendQuery`), then report ``sent(_:)``.
        case send
        /// `PQflush`, then report ``flushed(_:)``.
        case flush
        /// Wait for the socket, then report ``waited(_:)``.
        case wait(SocketInterest)
        /// `PQconsumeInput`, then report ``consumed(_:)``.
        case consumeInput
        /// `PQgetResult` while `PQisBusy` is 0: report ``resultsEnded()`` on NULL, else ``wouldBlock()``.
        case readResults
        /// The exchange is over: resolve `ending`.
        case finish(Ending)
    }

    /// How an exchange ended, before cancellation and the deadline are taken into account.
    enum Ending: Sendable, Equatable {
        /// Every result was read (the collector holds the rows, or the server's error).
        case resultsRead
        /// Never sent: the task was cancelled first. The connection is untouched.
        case cancelledBeforeSend
        /// libpq refused the query (`PQsendQuery*` returned 0: too many parameters, say). Nothing reached the
        /// server; the connection is still usable.
        case sendRefused
        /// Sending or reading failed, the wait for the socket was failed (the deadline's last resort, a reactor
        /// error), or a result came that this client cannot take (COPY): the connection cannot be trusted any more.
        case connectionLost
    }

    private(set) var state: State = .initial

    /// Starts the exchange; `cancellable` statements of an already cancelled task are never sent.
    mutating func start(cancellable: Bool, taskCancelled: Bool) -> Action {
        precondition(state == .initial, "a query exchange starts once")
        if cancellable && taskCancelled { return end(.cancelledBeforeSend) }
        return .send
    }

    /// The send call returned; `accepted` when it returned 1.
    mutating func sent(_ accepted: Bool) -> Action {
        guard state == .initial else { return unexpected() }
        guard accepted else { return end(.sendRefused) }
        state = .flushing
        return .flush
    }

    /// `PQflush` returned `code`: 0 all out, 1 more to send, -1 failure.
    mutating func flushed(_ code: Int32) -> Action {
        guard state == .flushing else { return unexpected() }
        switch code {
        case 0:
            state = .reading
            return .readResults
        case 1:
            // libpq asks to read too while the server's reply may be filling the other direction.
            return .wait(.readOrWrite)
        default:
            return end(.connectionLost)
        }
    }

    /// The wait for the socket ended: `ready`, or failed (interrupted by the deadline's last resort, say).
    mutating func waited(_ ready: Bool) -> Action {
        guard state == .flushing || state == .reading else { return unexpected() }
        return ready ? .consumeInput : end(.connectionLost)
    }

    /// `PQconsumeInput` returned; `ok` when it returned 1.
    mutating func consumed(_ ok: Bool) -> Action {
        switch state {
        case .flushing where ok: return .flush
        case .reading where ok: return .readResults
        case .flushing, .reading: return end(.connectionLost)
        case .initial, .done: return unexpected()
        }
    }

    /// `PQisBusy` said the next result is not complete yet: wait until the socket is readable.
    mutating func wouldBlock() -> Action {
        guard state == .reading else { return unexpected() }
        return .wait(.read)
    }

    /// `PQgetResult` returned NULL: the server sent everything for this statement.
    mutating func resultsEnded() -> Action {
        guard state == .reading else { return unexpected() }
        return end(.resultsRead)
    }

    /// A result the driver could not take (COPY, which this client does not speak): the protocol state is unknown.
    mutating func resultRefused() -> Action {
        guard state == .reading else { return unexpected() }
        return end(.connectionLost)
    }

    private mutating func end(_ ending: Ending) -> Action {
        state = .done
        return .finish(ending)
    }

    /// An event the protocol does not allow in this state is a driver bug; fail the connection rather than guess.
    private mutating func unexpected() -> Action {
        assertionFailure("query event in state \(state)")
        return end(.connectionLost)
    }
}

/// What the caller of a statement is told, once its exchange ended and the cancel and deadline bookkeeping are in.
enum QueryResolution: Sendable, Equatable {
    /// Return what the exchange produced: its rows, or the server's error as is.
    case outcome
    /// Throw `CancellationError`: the task was cancelled and the server stopped the statement for it (or it was
    /// never sent).
    case cancelled
    /// Throw a `.deadline` error: the statement ran past its deadline and the server stopped it for that.
    case deadline

    /// The resolution of an exchange that ended with `ending`; `serverCancelled` when the collected error is the
    /// server's "canceling statement" (57014), `cancelRequested` when this task asked for a cancel, `deadlinePassed`
    /// when the statement deadline fired. A statement that completed before the cancel reached the server keeps
    /// its rows; a 57014 nobody here asked for (an operator's `pg_cancel_backend`) is passed on as it is.
    static func resolve(_ ending: QueryStateMachine.Ending, serverCancelled: Bool, cancelRequested: Bool,
                        deadlinePassed: Bool) -> QueryResolution {
        switch ending {
        case .cancelledBeforeSend:
            return .cancelled
        case .sendRefused, .connectionLost:
            return .outcome
        case .resultsRead:
            guard serverCancelled else { return .outcome }
            if deadlinePassed { return .deadline }
            return cancelRequested ? .cancelled : .outcome
        }
    }

    /// Whether the connection must be discarded after `ending` (whose socket may be stuck on a dead network, so
    /// the cancel in flight is abandoned rather than waited for).
    static func isFatal(_ ending: QueryStateMachine.Ending) -> Bool {
        ending == .connectionLost
    }
}
