/// The bookkeeping of a connection pool as a pure value: slots, idle connections, and the FIFO of waiters with
/// their deadlines.
///
/// It never opens, checks or closes a connection itself, and never reads a clock; each event returns what the pool
/// must do. A slot is counted as leased from the moment it is granted, including while its connection is being
/// opened, so the pool never exceeds `maxConnections`. Waiter timeouts are events too: the pool keeps one timer,
/// armed when ``acquire(waiter:deadline:)`` or ``timerFired(at:)`` says so, and reports its firing to
/// ``timerFired(at:)``. Every waiter gets the same timeout, so deadlines follow queue order and the head's is the
/// next to pass.
struct PoolStateMachine<Connection> {
    /// What an acquirer receives: an idle connection to verify, or a free slot to open a connection in.
    enum Grant {
        case connection(Connection)
        case openSlot
    }

    /// What the pool does after ``acquire(waiter:)``.
    enum AcquireAction {
        case grant(Grant)
        /// The waiter was queued; it is resumed by a later release, or removed by ``removeWaiter(_:)`` or
        /// ``timerFired(at:)``. `armTimer`: the pool's waiter timer is idle; arm it to fire at that instant.
        case wait(armTimer: ContinuousClock.Instant?)
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
    private(set) var waiters: [(id: UInt64, deadline: ContinuousClock.Instant)] = []
    private(set) var isClosed = false
    /// Whether the pool's waiter timer is armed (it fires once, then ``timerFired(at:)`` says whether to re-arm).
    private(set) var timerArmed = false

    init(maxConnections: Int) {
        precondition(maxConnections > 0, "a pool needs at least one connection")
        self.maxConnections = maxConnections
    }

    /// Numbers for metrics; `size` counts slots whose connection is still being opened.
    var stats: PostgresPoolStats {
        PostgresPoolStats(size: idle.count + leased, inUse: leased, idle: idle.count, waiters: waiters.count)
    }

    /// A task wants a connection: reuse the most recently used idle one, open one in a free slot, or queue until
    /// `deadline`.
    mutating func acquire(waiter: UInt64, deadline: ContinuousClock.Instant) -> AcquireAction {
        if isClosed { return .fail(.poolClosed) }
        if let connection = idle.popLast() {
            leased += 1
            return .grant(.connection(connection))
        }
        if leased + idle.count < maxConnections {
            leased += 1
            return .grant(.openSlot)
        }
        waiters.append((waiter, deadline))
        guard !timerArmed else { return .wait(armTimer: nil) }
        timerArmed = true
        return .wait(armTimer: waiters[0].deadline)
    }

    /// A task wants a connection and will not queue for it: what ``acquire(waiter:deadline:)`` grants when it grants at
    /// once, else nil with nothing changed (a closed pool, a full one, or one with waiters already queued, who come
    /// first). Most leases find a connection free; this lets them take it without a waiter's bookkeeping.
    mutating func acquireNow() -> Grant? {
        guard !isClosed, waiters.isEmpty else { return nil }
        if let connection = idle.popLast() {
            leased += 1
            return .connection(connection)
        }
        guard leased + idle.count < maxConnections else { return nil }
        leased += 1
        return .openSlot
    }

    /// The waiter timer fired at `now`: the waiters whose deadline has passed (oldest first), which time out, and
    /// when the timer must fire next (nil: nobody waits, and it stays idle until the next queued waiter).
    mutating func timerFired(at now: ContinuousClock.Instant) -> (expired: [UInt64], next: ContinuousClock.Instant?) {
        var expired: [UInt64] = []
        while let head = waiters.first, head.deadline <= now {
            expired.append(head.id)
            waiters.removeFirst()
        }
        timerArmed = !waiters.isEmpty
        return (expired, waiters.first?.deadline)
    }

    /// A leased connection comes back; `reusable` is false when it is broken or was left inside a transaction.
    mutating func release(_ connection: Connection, reusable: Bool) -> ReleaseAction {
        guard reusable else { return ReleaseAction(close: connection, grant: slotFreed().grant) }
        if isClosed {
            leased -= 1
            return ReleaseAction(close: connection)
        }
        if !waiters.isEmpty {
            return ReleaseAction(grant: (waiters.removeFirst().id, .connection(connection)))
        }
        leased -= 1
        idle.append(connection)
        return ReleaseAction()
    }

    /// A leased slot holds no connection any more (opening it failed, or its connection was discarded):
    /// the first waiter may open one in it.
    mutating func slotFreed() -> ReleaseAction {
        if !isClosed && !waiters.isEmpty { return ReleaseAction(grant: (waiters.removeFirst().id, .openSlot)) }
        leased -= 1
        return ReleaseAction()
    }

    /// A waiter gives up (its task was cancelled); returns whether it was still queued and must be failed.
    mutating func removeWaiter(_ waiter: UInt64) -> Bool {
        guard let index = waiters.firstIndex(where: { $0.id == waiter }) else { return false }
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
        return (idle, waiters.map(\.id))
    }
}

extension PoolStateMachine: Sendable where Connection: Sendable {}
extension PoolStateMachine.Grant: Sendable where Connection: Sendable {}
