import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct CancellationTests {
    @Test func cancellingATaskCancelsTheServerQueryAndKeepsTheConnection() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let pid = connection.backendPID
        let query = Task { _ = try await connection.query("SELECT pg_sleep(30)") }
        try await TestDatabase.waitUntilSleeping(pid)
        let clock = ContinuousClock()
        let cancelledAt = clock.now
        query.cancel()
        let outcome = await query.result
        // Well before the 30 s the query would take (the bound allows for a suite saturating the machine).
        #expect(clock.now - cancelledAt < .seconds(10))
        #expect(throws: CancellationError.self) { try outcome.get() }

        let active = try await TestDatabase.withConnection { observer in
            try await observer.query(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [pid]
            )[0].decode("n", as: Int.self)
        }
        #expect(active == 0)
        #expect(!connection.isBroken)
        #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
    }

    @Test func aTaskCancelledBeforehandSendsNothing() async throws {
        let table = TestDatabase.uniqueName("precancel")
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        try await connection.execute(script: "CREATE TEMP TABLE \(table) (id int)")
        let attempt = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            _ = try await connection.query("INSERT INTO \(table) VALUES (1)")
        }
        await #expect(throws: CancellationError.self) { try await attempt.value }
        #expect(try await connection.query("SELECT count(*) AS n FROM \(table)")[0].decode("n", as: Int.self) == 0)
    }

    @Test func nonCancellableQueriesIgnoreCancellation() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let query = Task {
            try await connection.query("SELECT 1 AS slept FROM pg_sleep(10)", cancellable: false)[0].decode("slept", as: Int.self)
        }
        try await TestDatabase.waitUntilSleeping(connection.backendPID)
        query.cancel()
        #expect(try await query.value == 1)
    }

    /// Cancels at once, or after yielding 1–5 times, racing the query to the server (wherever it has got to); each
    /// must still stop promptly and leave the connection in sync for the next query.
    @Test func earlyAndRepeatedCancellationsLeaveTheConnectionUsable() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let clock = ContinuousClock()
        for round in 0..<20 {
            let query = Task { _ = try await connection.query("SELECT pg_sleep(120)") }
            for _ in 0 ..< round % 6 { await Task.yield() }
            let start = clock.now
            query.cancel()
            await #expect(throws: CancellationError.self) { try await query.value }
            // Well before the 120 s the query would take (the bound allows for a machine saturated under a sanitizer).
            #expect(clock.now - start < .seconds(30), "well before the 120 s the query would take")
            #expect(try await connection.query("SELECT $1::int AS n", [round])[0].decode("n", as: Int.self) == round)
        }
    }

    @Test func twoTasksOnOneConnectionIsAMisuseError() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        let slow = Task { _ = try await connection.query("SELECT pg_sleep(30)") }
        try await TestDatabase.waitUntilSleeping(connection.backendPID)
        await #expect { try await connection.query("SELECT 1") } throws: { ($0 as? PostgresError)?.kind == .misuse }
        slow.cancel()
        await #expect(throws: CancellationError.self) { try await slow.value }
        #expect(!connection.isBroken)
    }
}
