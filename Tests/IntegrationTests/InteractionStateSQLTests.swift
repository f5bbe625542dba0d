import Foundation
import Postgres
import Testing
@testable import Interactions

/// `InteractionState.isOverSQL`, the SQL spelling of "the interaction is over", run by the database: it must agree
/// with `InteractionState.isOver` on every state.
@Suite("Interaction state in SQL", .timeLimit(.minutes(10)))
struct InteractionStateSQLTests {
    @Test func theDatabaseSaysOverExactlyWhenSwiftDoes() async throws {
        let database = try await MigratedDatabase.create(maxConnections: 1)
        do {
            let states = InteractionState.allCases
            let rows = try await database.pool.withConnection { connection in
                try await connection.query("""
                    SELECT s.state, \(InteractionState.isOverSQL("s.state")) AS over FROM unnest($1::text[]) AS s (state)
                    """, [PostgresArray(states.map(\.rawValue))])
            }
            #expect(rows.count == states.count)
            for row in rows {
                let state = try #require(InteractionState(rawValue: try row.decode("state")))
                #expect(try row.decode("over", as: Bool.self) == state.isOver, "\(state)")
            }
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }
}
