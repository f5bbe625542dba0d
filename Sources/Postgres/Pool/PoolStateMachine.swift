/// The bookkeeping of a connection pool as a pure value: slots, idle connections, and the FIFO of waiters.
///
/// It never opens, checks or closes a connection itself; each event returns what the pool must do. A slot is
/// counted as leased from the moment it is granted, including while its connection is being opened, so the pool
/// never exceeds `maxConnections`.
struct PoolStateMachine<Connection> {
    /// What an acquirer receives: an idle connection to verify, or a free slot to open a connection in.
    enum Grant {
        case connection(Connection)
        case openSlot
    }

    /// What the pool does after ``acquire(waiter:)``.
    enum AcquireAction {
        case grant(Grant)
        /// The waiter was queued; it is resumed by a later release, or removed by ``removeWaiter(_:)``.
        case wait
        case fail(PostgresError.Kind)
    }

    /// What the pool does after a release: close a connection, resume a waiter with a grant, both, or nothing.
    struct ReleaseAction {
        var close: Connection?
        var grant: (waiter: UInt64, grant: Grant)?
    }

    let maxConnections: Int
    private(set) var idle: [Connection] = []
    private(set) var leased = 0
    private(set) var waiters: [UInt64] = []
    private(set) var isClosed = false

    init(maxConnections: Int) {
        precondition(maxConnections > 0, "a pool needs at least one connection")
        self.maxConnections = maxConnections
    }

    /// Numbers for metrics; `size` counts slots whose connection is still being opened.
    var stats: PostgresPoolStats {
        PostgresPoolStats(size: idle.count + leased, inUse: leased, idle: idle.count, waiters: waiters.count)
    }

    /// A task wants a connection: reuse the most recently used idle one, open one in a free slot, or queue.
    mutating func acquire(waiter: UInt64) -> AcquireAction {
        if isClosed { return .fail(.poolClosed) }
        if let connection = idle.popLast() {
            leased += 1
            return .grant(.connection(connection))
        }
        if leased + idle.count < maxConnections {
            leased += 1
            return .grant(.openSlot)
        }
        waiters.append(waiter)
        return .wait
    }

    /// A leased connection comes back; `reusable` is false when it is broken or was left inside a transaction.
    mutating func release(_ connection: Connection, reusable: Bool) -> ReleaseAction {
        guard reusable else { return ReleaseAction(close: connection, grant: slotFreed().grant) }
        if isClosed {
            leased -= 1
            return ReleaseAction(close: connection)
        }
        if !waiters.isEmpty {
            return ReleaseAction(grant: (waiters.removeFirst(), .connection(connection)))
        }
        leased -= 1
        idle.append(connection)
        return ReleaseAction()
    }

    /// A leased slot holds no connection any more (opening it failed, or its connection was discarded):
    /// the first waiter may open one in it.
    mutating func slotFreed() -> ReleaseAction {
        if !isClosed && !waiters.isEmpty { return ReleaseAction(grant: (waiters.removeFirst(), .openSlot)) }
        leased -= 1
        return ReleaseAction()
    }

    /// A waiter gives up (timeout or cancellation); returns whether it was still queued and must be failed.
    mutating func removeWaiter(_ waiter: UInt64) -> Bool {
        guard let index = waiters.firstIndex(of: waiter) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// Closes the pool: returns the idle connections to close and the waiters to fail. Leased ones close on release.
    mutating func close() -> (idle: [Connection], waiters: [UInt64]) {
        isClosed = true
        defer {
            idle = []
            waiters = []
        }
        return (idle, waiters)
    }
}

extension PoolStateMachine: Sendable where Connection: Sendable {}
extension PoolStateMachine.Grant: Sendable where Connection: Sendable {}
