/// The lifecycle of one connection, as a pure value: `idle → busy → idle`, until `broken` or `closed`.
///
/// The I/O layer asks it before touching libpq and performs the action it returns. Being `busy` is what gives one
/// task exclusive use of the `PGconn`; a second task that tries gets a `.misuse` error instead of corrupting it.
struct ConnectionStateMachine: Sendable, Equatable {
    /// Where the connection is in its life.
    enum State: Sendable, Equatable {
        /// Ready for the next operation.
        case idle
        /// One operation (query, liveness probe) owns the connection; `generation` numbers queries uniquely.
        case busy(generation: UInt64)
        /// A fatal I/O or protocol error happened; only `close()` is left.
        case broken
        /// The socket is closed and the `PGconn` freed.
        case closed
    }

    /// What the caller of ``begin()`` does next.
    enum BeginAction: Equatable {
        case proceed(generation: UInt64)
        case fail(PostgresError.Kind, String)
    }

    /// What the caller of ``end(healthy:)`` or ``close()`` does next.
    enum CloseAction: Equatable {
        case none
        /// Deregister the socket and `PQfinish`.
        case closeConnection
    }

    private(set) var state: State = .idle
    private var lastGeneration: UInt64 = 0
    private var closeRequested = false

    /// Whether the connection can no longer run queries.
    var isBroken: Bool {
        switch state {
        case .idle: return false
        case .busy: return closeRequested
        case .broken, .closed: return true
        }
    }

    /// Takes exclusive use of the connection for one operation.
    mutating func begin() -> BeginAction {
        switch state {
        case .idle:
            lastGeneration += 1
            state = .busy(generation: lastGeneration)
            return .proceed(generation: lastGeneration)
        case .busy:
            return .fail(.misuse, "connection used by two tasks at once; use one task at a time, or a pool")
        case .broken:
            return .fail(.connection, "connection is broken")
        case .closed:
            return .fail(.connection, "connection is closed")
        }
    }

    /// Gives the connection back after an operation; `healthy` is false after a fatal error.
    mutating func end(healthy: Bool) -> CloseAction {
        guard case .busy = state else { return .none }
        if closeRequested {
            state = .closed
            return .closeConnection
        }
        state = healthy ? .idle : .broken
        return .none
    }

    /// Closes now if no operation runs, else when the running one ends.
    mutating func close() -> CloseAction {
        switch state {
        case .idle, .broken:
            state = .closed
            return .closeConnection
        case .busy:
            closeRequested = true
            return .none
        case .closed:
            return .none
        }
    }
}
