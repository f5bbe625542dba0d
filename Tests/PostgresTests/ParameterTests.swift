import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct ParameterTests {
    static let hostileStrings = [
        "'; DROP TABLE x; --",
        "Robert'); DROP TABLE students;--",
        "quote ' double \" backtick ` dollar $1 $$ body $$",
        #"back\slash \\ \x41 \n \' E'\n'"#,
        "emoji 👩‍💻🎉 CJK 漢字かなカナ 한국어 RTL עברית",
        "",
        "   leading and trailing spaces   ",
        "line\nbreaks\r\nand\ttabs",
    ]

    @Test("bound text comes back unchanged", arguments: hostileStrings)
    func hostileTextRoundTrips(_ text: String) async throws {
        try await TestDatabase.withConnection { connection throws in
            let rows = try await connection.query("SELECT $1::text AS v, length($1) AS n", [text])
            #expect(try rows[0].decode("v", as: String.self) == text)
            #expect(try rows[0].decode("n", as: Int.self) == text.unicodeScalars.count)
        }
    }

    @Test func hostileTextIsStoredAsDataNotSQL() async throws {
        let table = TestDatabase.uniqueName("hostile")
        try await TestDatabase.withConnection { connection throws in
            try await connection.execute(script: "CREATE TEMP TABLE \(table) (id serial PRIMARY KEY, body text)")
            for text in Self.hostileStrings {
                _ = try await connection.query("INSERT INTO \(table) (body) VALUES ($1)", [text])
            }
            let rows = try await connection.query("SELECT body FROM \(table) ORDER BY id")
            #expect(try rows.map { try $0.decode("body", as: String.self) } == Self.hostileStrings)
        }
    }

    @Test func oneMegabyteTextRoundTrips() async throws {
        let text = String(repeating: "0123456789abcdef€", count: 1_048_576 / 17)
        try await TestDatabase.withConnection { connection throws in
            let rows = try await connection.query("SELECT $1::text AS v, md5($1) AS digest", [text])
            #expect(try rows[0].decode("v", as: String.self) == text)
        }
    }

    @Test func nullsTravelBothWays() async throws {
        try await TestDatabase.withConnection { connection throws in
            let nothing: String? = nil
            let rows = try await connection.query(
                "SELECT $1::text AS a, $2::int AS b, $1 IS NULL AS a_is_null, NULL::text AS c", [nothing, nil])
            #expect(try rows[0].decode("a", as: String?.self) == nil)
            #expect(try rows[0].decode("b", as: Int?.self) == nil)
            #expect(try rows[0].decode("a_is_null", as: Bool.self))
            #expect(try rows[0].decode("c", as: String?.self) == nil)
            #expect(rows[0].isNull("c"))
        }
    }

    @Test func textWithNulByteIsRejectedBeforeSending() async throws {
        try await TestDatabase.withConnection { connection throws in
            let long = String(repeating: "é-x", count: 3_000)
            for text in ["a\u{0}b", "\u{0}", "\u{0}a", "a\u{0}", long + "\u{0}" + long] {
                await #expect { try await connection.query("SELECT $1::text, $2::text", ["before", text]) } throws: { error in
                    (error as? PostgresError)?.kind == .encoding
                }
            }
            // Text without one goes through whole, beside an empty string and a NULL.
            let rows = try await connection.query("SELECT $1::text AS a, $2::text AS b, $3::text AS c, $4::text AS d",
                                                  [long, "", nil as String?, "😀"])
            #expect(try rows[0].decode("a", as: String.self) == long && rows[0].decode("b", as: String.self) == "")
            #expect(try rows[0].decode("c", as: String?.self) == nil && rows[0].decode("d", as: String.self) == "😀")
            #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
        }
    }
}
