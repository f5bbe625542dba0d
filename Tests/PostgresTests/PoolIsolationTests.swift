import Postgres
import Testing

/// An actor whose state is touched inside pool bodies: they run on the caller's actor, so this compiles and is safe.
actor Ledger {
    private(set) var entries: [Int] = []

    func record(using pool: PostgresPool) async throws {
        let value = try await pool.withTransaction { connection in
            let seven = try await connection.query("SELECT 7 AS n")[0].decode("n", as: Int.self)
            entries.append(seven)
            return seven
        }
        entries.append(value)
    }
}

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct PoolIsolationTests {
    @Test func bodiesRunOnTheCallersActor() async throws {
        let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 1)
        let ledger = Ledger()
        try await ledger.record(using: pool)
        #expect(await ledger.entries == [7, 7])
        await pool.close()
    }
}
