import CLibPQ
import Testing
@testable import Postgres

/// A column looked up by name is the one `PQfnumber` names, whether the name takes the plain lower-case shortcut or
/// libpq's own folding and quoting rules.
@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(2)))
struct ColumnLookupTests {
    @Test func namesFindTheColumnsPQfnumberFinds() async throws {
        try await TestDatabase.withConnection { connection in
            let rows = try await connection.query(#"""
                SELECT 1 AS a, 2 AS "B", 3 AS b, 4 AS "a b", 5 AS x_1, 6 AS a, 7 AS "ÿ", 8 AS "Mixed", 9 AS mixed, 10 AS "9lives"
                """#)
            let result = rows.result
            let names = ["a", "b", "B", "\"B\"", "a b", "\"a b\"", "x_1", "X_1", "ÿ", "\"ÿ\"", "Mixed", "\"Mixed\"", "mixed",
                         "MIXED", "9lives", "\"9lives\"", "", "\"\"", "none", "a\"", "_"]
            for name in names {
                let expected = PQfnumber(result.pointer, name)
                #expect(result.columnIndex(name) == (expected >= 0 ? expected : nil), "\(name.debugDescription)")
            }
        }
    }
}
