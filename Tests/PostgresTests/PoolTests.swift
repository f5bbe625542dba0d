import Foundation
import Postgres
import Testing
import TestSupport

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct PoolTests {
    /// A one-connection pool whose connection is held by a task until `release` is called.
    struct HeldPool {
        let pool: PostgresPool
        let holder: Task<Void, any Error>
        let release: @Sendable () -> Void

        init(acquireTimeout: Duration) async {
            let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 1, acquireTimeout: acquireTimeout)
            let (entered, enteredSignal) = AsyncStream.makeStream(of: Void.self)
            let (gate, gateSignal) = AsyncStream.makeStream(of: Void.self)
            holder = Task {
                // Whatever happens (a connection that cannot be opened, say), the wait below ends.
                defer { enteredSignal.finish() }
                try await pool.withConnection { _ in
                    enteredSignal.yield()
                    for await _ in gate { break }
                }
            }
            for await _ in entered { break }
            self.pool = pool
            self.release = { gateSignal.yield() }
        }
    }

    @Test func exhaustedPoolTimesOutThenRecovers() async throws {
        let held = await HeldPool(acquireTimeout: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        await #expect { try await held.pool.withConnection { _ in } } throws: {
            ($0 as? PostgresError)?.kind == .poolTimeout
        }
        #expect(clock.now - start >= .milliseconds(300))
        #expect(held.pool.stats == PostgresPoolStats(size: 1, inUse: 1, idle: 0, waiters: 0))

        held.release()
        try await held.holder.value
        let one = try await held.pool.withConnection { try await $0.query("SELECT 1 AS one")[0].decode("one", as: Int.self) }
        #expect(one == 1)
        #expect(held.pool.stats == PostgresPoolStats(size: 1, inUse: 0, idle: 1, waiters: 0))
        await held.pool.close()
    }

    @Test func waiterGetsTheConnectionWhenItIsReleased() async throws {
        let held = await HeldPool(acquireTimeout: .seconds(5))
        let waiter = Task { try await held.pool.withConnection { $0.backendPID } }
        await waitUntil { held.pool.stats.waiters == 1 }
        held.release()
        try await held.holder.value
        _ = try await waiter.value
        #expect(held.pool.stats.size == 1)
        await held.pool.close()
    }

    @Test func cancelledWaiterLeavesTheQueueWithoutLeakingASlot() async throws {
        let held = await HeldPool(acquireTimeout: .seconds(30))
        let waiter = Task { try await held.pool.withConnection { _ in } }
        await waitUntil { held.pool.stats.waiters == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(held.pool.stats == PostgresPoolStats(size: 1, inUse: 1, idle: 0, waiters: 0))
        held.release()
        try await held.holder.value
        #expect(held.pool.stats == PostgresPoolStats(size: 1, inUse: 0, idle: 1, waiters: 0))
        try await held.pool.withConnection { _ = try await $0.query("SELECT 1") }
        await held.pool.close()
    }

    @Test func closingThePoolFailsWaitersAndLaterCallers() async throws {
        let held = await HeldPool(acquireTimeout: .seconds(30))
        let waiter = Task { try await held.pool.withConnection { _ in } }
        await waitUntil { held.pool.stats.waiters == 1 }
        await held.pool.close()
        await #expect { try await waiter.value } throws: { ($0 as? PostgresError)?.kind == .poolClosed }
        held.release()
        try await held.holder.value
        #expect(held.pool.stats == PostgresPoolStats(size: 0, inUse: 0, idle: 0, waiters: 0))
        await #expect { try await held.pool.withConnection { _ in } } throws: { ($0 as? PostgresError)?.kind == .poolClosed }
    }

    @Test func terminatedIdleConnectionIsReplaced() async throws {
        let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 1, acquireTimeout: .seconds(5))
        let firstPID = try await pool.withConnection { $0.backendPID }
        try await TestDatabase.withConnection { admin in
            _ = try await admin.query("SELECT pg_terminate_backend($1)", [firstPID])
            try await waitUntil {
                try await admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1", [firstPID])[0]
                    .decode("n", as: Int.self) == 0
            }
        }
        let (pid, one) = try await pool.withConnection { connection in
            (connection.backendPID, try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self))
        }
        #expect(one == 1)
        #expect(pid != firstPID)
        #expect(pool.stats == PostgresPoolStats(size: 1, inUse: 0, idle: 1, waiters: 0))
        await pool.close()
    }

    @Test func connectionLeftInATransactionIsNotReused() async throws {
        let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 1)
        let firstPID = try await pool.withConnection { connection in
            try await connection.execute(script: "BEGIN")
            return connection.backendPID
        }
        #expect(pool.stats.size == 0)
        let secondPID = try await pool.withConnection { connection in
            _ = try await connection.query("SELECT 1")
            return connection.backendPID
        }
        #expect(secondPID != firstPID)
        await pool.close()
    }

    @Test func manyConcurrentCallersShareABoundedPool() async throws {
        let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 4, acquireTimeout: .seconds(10))
        let peak = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<60 {
                group.addTask {
                    try await pool.withConnection { connection in
                        let stats = pool.stats
                        let echoed = try await connection.query("SELECT $1::int AS n, pg_sleep(0.01)", [index])[0].decode("n", as: Int.self)
                        #expect(echoed == index)
                        return stats.size
                    }
                }
            }
            return try await group.reduce(0) { max($0, $1) }
        }
        #expect(peak <= 4)
        #expect(pool.stats.size <= 4 && pool.stats.inUse == 0 && pool.stats.waiters == 0)
        await pool.close()
    }
}

