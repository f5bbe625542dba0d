import CLibPQ
import Testing
import TestSupport
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

    /// In a result of many rows (whose lookups are remembered), names asked for in the same order row after row, then
    /// in a random order with repeats and unknown names: each finds `PQfnumber`'s column, the first of two with one
    /// name included, and decodes that column's value.
    @Test func rememberedLookupsFindTheSameColumnsInAnyOrder() async throws {
        try await TestDatabase.withConnection { connection in
            let rows = try await connection.query(#"""
                SELECT n AS a, n * 10 AS b, n * 100 AS "B", n * 1000 AS a, n * 10000 AS c_1
                FROM generate_series(1, 30) AS n
                """#)
            let result = rows.result
            let names = ["a", "b", "B", "\"B\"", "c_1", "C_1", "none", "A"]
            func check(_ row: PostgresRow, _ n: Int, _ name: String) throws {
                let expected = PQfnumber(result.pointer, name)
                #expect(result.columnIndex(name) == (expected >= 0 ? expected : nil), "\(name.debugDescription)")
                guard expected >= 0 else { return }
                let scale = [1, 10, 100, 1000, 10000][Int(expected)]
                #expect(try row.decode(name, as: Int.self) == n * scale, "\(name.debugDescription) in row \(n)")
            }
            for (offset, row) in rows.enumerated() where offset < 10 {
                for name in ["a", "b", "\"B\"", "c_1"] { try check(row, offset + 1, name) }
            }
            var random = SplitMix64(seed: 17)
            for (offset, row) in rows.enumerated() where offset >= 10 {
                for _ in 0 ..< 12 { try check(row, offset + 1, names[Int(random.next() % UInt64(names.count))]) }
            }
        }
    }
}
