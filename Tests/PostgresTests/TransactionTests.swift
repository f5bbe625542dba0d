import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct TransactionTests {
    let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 2)

    /// Runs `body` with a fresh table `(id int primary key)`, dropped afterwards.
    func withTable(_ body: (String) async throws -> Void) async throws {
        let table = TestDatabase.uniqueName("tx")
        try await TestDatabase.withConnection { try await $0.execute(script: "CREATE TABLE \(table) (id int PRIMARY KEY)") }
        do {
            try await body(table)
        } catch {
            Issue.record(error)
        }
        try await TestDatabase.withConnection { try await $0.execute(script: "DROP TABLE \(table)") }
        await pool.close()
    }

    @Test func commitsOnSuccess() async throws {
        try await withTable { table throws in
            let value = try await pool.withTransaction { connection in
                _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [1])
                _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [2])
                return "done"
            }
            #expect(value == "done")
            #expect(try await TestDatabase.count(table) == 2)
        }
    }

    @Test func rollsBackWhenTheBodyThrows() async throws {
        try await withTable { table throws in
            await #expect(throws: ExpectedFailure.self) {
                try await pool.withTransaction { connection in
                    _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [1])
                    throw ExpectedFailure()
                }
            }
            #expect(try await TestDatabase.count(table) == 0)
            #expect(pool.stats.inUse == 0)
        }
    }

    @Test func rollsBackWhenAStatementFails() async throws {
        try await withTable { table throws in
            await #expect { try await pool.withTransaction { connection in
                _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [1])
                _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [1])
            } } throws: { ($0 as? PostgresError)?.isUniqueViolation == true }
            #expect(try await TestDatabase.count(table) == 0)
            // The connection went back to the pool clean: a new transaction on it works.
            try await pool.withTransaction { _ = try await $0.query("INSERT INTO \(table) VALUES (2)") }
            #expect(try await TestDatabase.count(table) == 1)
        }
    }

    @Test func rollsBackWhenCancelledMidStatement() async throws {
        try await withTable { table throws in
            let pool = self.pool
            let (inserted, insertedSignal) = AsyncStream.makeStream(of: Int32.self)
            let transaction = Task {
                try await pool.withTransaction { connection in
                    _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [1])
                    insertedSignal.yield(connection.backendPID)
                    _ = try await connection.query("SELECT pg_sleep(30)")
                }
            }
            for await pid in inserted {
                try await TestDatabase.waitUntilSleeping(pid)
                break
            }
            transaction.cancel()
            await #expect(throws: CancellationError.self) { try await transaction.value }
            #expect(try await TestDatabase.count(table) == 0)
            #expect(pool.stats == PostgresPoolStats(size: 1, inUse: 0, idle: 1, waiters: 0))
        }
    }

    @Test func rollsBackWhenCancelledAfterTheBodyReturns() async throws {
        try await withTable { table throws in
            let pool = self.pool
            let transaction = Task {
                try await pool.withTransaction { connection in
                    _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", [1])
                    withUnsafeCurrentTask { $0?.cancel() }
                }
            }
            await #expect(throws: CancellationError.self) { try await transaction.value }
            #expect(try await TestDatabase.count(table) == 0)
        }
    }
}
