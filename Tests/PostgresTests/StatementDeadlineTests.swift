import Foundation
import Postgres
import Testing

/// A connection's statement deadline, one watch reused by each statement in turn: a statement past it is cancelled
/// with a `.deadline` error and the connection stays usable; statements that end in time are never touched by an
/// earlier statement's timer, however close to their deadline they end.
@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(3)))
struct StatementDeadlineTests {
    static func connect(deadline: Duration) async throws -> PostgresConnection {
        try await PostgresConnection.connect(PostgresConfiguration(
            connectionString: TestDatabase.connectionString!, statementDeadline: deadline, cancelGrace: .seconds(5)))
    }

    @Test func aStatementPastItsDeadlineFailsAndTheConnectionGoesOn() async throws {
        let connection = try await Self.connect(deadline: .milliseconds(300))
        defer { connection.close() }
        for round in 1 ... 3 {
            await #expect(throws: PostgresError.self, "round \(round)") {
                do {
                    _ = try await connection.query("SELECT pg_sleep(20)")
                } catch let error as PostgresError {
                    #expect(error.kind == .deadline)
                    throw error
                }
            }
            #expect(!connection.isBroken)
            // The next statements are watched afresh: quick ones, and one that takes most of its deadline.
            #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
            _ = try await connection.query("SELECT pg_sleep(0.1)")
        }
    }

    @Test func statementsEndingNearTheirDeadlineAreNeverCancelledByAnEarlierOnesTimer() async throws {
        // Each statement ends before its own deadline, and the next is sent at once: an earlier statement's timer,
        // were it to act on the statement running when it fires, would cancel one of these. The margin (0.4 s) is
        // wide enough for a loaded machine; the earlier timer still fires in the middle of the next statement.
        let connection = try await Self.connect(deadline: .milliseconds(1000))
        defer { connection.close() }
        for _ in 0 ..< 8 {
            _ = try await connection.query("SELECT pg_sleep(0.6)")
            for _ in 0 ..< 20 { _ = try await connection.query("SELECT 1") }
        }
        #expect(!connection.isBroken)
    }

    @Test func aStatementSentWithoutABoundIsNotWatched() async throws {
        let connection = try await Self.connect(deadline: .milliseconds(200))
        defer { connection.close() }
        // Scripts (migrations) run with no deadline.
        try await connection.execute(script: "SELECT pg_sleep(0.5)")
        #expect(try await connection.query("SELECT 2 AS two")[0].decode("two", as: Int.self) == 2)
    }
}
