import Coordination

/// A bounded set of connections shared by many tasks.
///
/// Connections open lazily, up to `maxConnections`. When all are in use, callers queue in FIFO order and fail with a
/// `.poolTimeout` error after `acquireTimeout`. Before lending an idle connection the pool checks, without a round
/// trip, that its server is still there, and replaces it if not; broken connections are closed on release.
/// Lend connections with ``withConnection(isolation:_:)`` or ``withTransaction(isolation:_:)``, never keep them.
public final class PostgresPool: Sendable {
    typealias Grant = PoolStateMachine<PostgresConnection>.Grant
    typealias ReleaseAction = PoolStateMachine<PostgresConnection>.ReleaseAction

    struct State {
        var machine: PoolStateMachine<PostgresConnection>
        var continuations: [UInt64: CheckedContinuation<Grant, any Error>] = [:]
        var lastWaiterID: UInt64 = 0

        /// Removes a waiter's continuation, to resume it outside the lock.
        mutating func take(_ waiter: UInt64) -> CheckedContinuation<Grant, any Error>? {
            continuations.removeValue(forKey: waiter)
        }
    }

    /// Where new connections go.
    public let configuration: PostgresConfiguration
    /// How long a caller waits for a connection when all are in use.
    public let acquireTimeout: Duration
    /// Guards the slot bookkeeping and the queued waiters' continuations.
    let state: Locked<State>

    /// Creates an empty pool; no connection is opened until the first lease.
    public init(configuration: PostgresConfiguration, maxConnections: Int, acquireTimeout: Duration = .seconds(5)) {
        self.configuration = configuration
        self.acquireTimeout = acquireTimeout
        self.state = Locked(State(machine: PoolStateMachine(maxConnections: maxConnections)))
    }

    /// Current occupancy, for metrics.
    public var stats: PostgresPoolStats {
        state.withLock { $0.machine.stats }
    }

    /// Lends a connection to `body` and takes it back afterwards, even when `body` throws.
    ///
    /// Do not let the connection escape `body`, and do not leave a transaction open in it (such a connection is
    /// closed rather than reused); use ``withTransaction(isolation:_:)`` for transactions.
    public func withConnection<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connection = try await lease()
        do {
            let value = try await body(connection)
            release(connection)
            return value
        } catch {
            release(connection)
            throw error
        }
    }

    /// Closes idle connections and fails queued and later callers with `.poolClosed`; connections lent out now
    /// are closed when they come back.
    public func close() async {
        let (idle, waiters) = state.withLock { state in
            let (idle, waiterIDs) = state.machine.close()
            return (idle, waiterIDs.map { state.take($0) })
        }
        for connection in idle { connection.close() }
        for continuation in waiters {
            continuation?.resume(throwing: PostgresError(.poolClosed, "the pool was closed"))
        }
    }

    /// Takes a connection back: reused if healthy and outside a transaction, else closed.
    func release(_ connection: PostgresConnection) {
        let reusable = connection.isReusable()
        perform(state.withLock { $0.machine.release(connection, reusable: reusable) })
    }

    /// Gives up a leased slot whose connection could not be opened.
    func releaseSlot() {
        perform(state.withLock { $0.machine.slotFreed() })
    }

    /// Closes and resumes as the state machine decided.
    func perform(_ action: ReleaseAction) {
        action.close?.close()
        guard let (waiter, grant) = action.grant else { return }
        // The machine already dequeued the waiter, so a racing timeout or cancellation leaves this continuation to us.
        let continuation = state.withLock { $0.take(waiter) }
        continuation?.resume(returning: grant)
    }
}
