import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct DecodingTests {
    /// Binds `value`, casts it to `type` on the server, and decodes it back.
    func roundTrip<T: PostgresEncodable & PostgresDecodable>(_ value: T, as type: String) async throws -> T {
        try await TestDatabase.withConnection { connection throws in
            try await connection.query("SELECT $1::\(type) AS v", [value])[0].decode("v", as: T.self)
        }
    }

    @Test func integersRoundTrip() async throws {
        for value in [0, 42, -1, Int.max, Int.min] {
            #expect(try await roundTrip(value, as: "int8") == value)
        }
        for value in [Int64.max, Int64.min, 7] {
            #expect(try await roundTrip(value, as: "int8") == value)
        }
        for value in [Int32.max, Int32.min] {
            #expect(try await roundTrip(value, as: "int4") == value)
        }
    }

    @Test func doublesRoundTrip() async throws {
        for value in [0.0, 1.5, -2.25, .pi, 1e-300, 6.02214076e23, .infinity, -.infinity, .leastNonzeroMagnitude] {
            #expect(try await roundTrip(value, as: "float8") == value)
        }
        #expect(try await roundTrip(Double.nan, as: "float8").isNaN)
    }

    @Test func boolsRoundTrip() async throws {
        #expect(try await roundTrip(true, as: "bool") == true)
        #expect(try await roundTrip(false, as: "bool") == false)
    }

    @Test func uuidsRoundTrip() async throws {
        let uuid = UUID()
        #expect(try await roundTrip(uuid, as: "uuid") == uuid)
    }

    @Test func datesRoundTripWithMicroseconds() async throws {
        let date = Date(timeIntervalSince1970: 1_796_038_940.123456)
        let decoded = try await roundTrip(date, as: "timestamptz")
        #expect(microseconds(decoded) == microseconds(date))
        try await TestDatabase.withConnection { connection throws in
            let text = try await connection.query("SELECT $1::timestamptz::text AS t", [date])[0].decode("t", as: String.self)
            #expect(text == "2026-11-30 11:42:20.123456+00")
        }
    }

    @Test func datesDecodeFromAnySessionTimeZone() async throws {
        try await TestDatabase.withConnection { connection throws in
            try await connection.execute(script: "SET TIME ZONE 'Asia/Kolkata'")
            let rows = try await connection.query(
                "SELECT '2026-11-30 11:42:20.5+00'::timestamptz AS a, '2026-11-30 11:42:20+00'::timestamptz AS b, "
                    + "'2026-11-30 11:42:20+00'::timestamptz::text AS text")
            #expect(try rows[0].decode("text", as: String.self) == "2026-11-30 17:12:20+05:30")
            #expect(try rows[0].decode("a", as: Date.self) == Date(timeIntervalSince1970: 1_796_038_940.5))
            #expect(try rows[0].decode("b", as: Date.self) == Date(timeIntervalSince1970: 1_796_038_940))
        }
    }

    /// `PostgresTimestamp` is exact where a `Date` is not: every microsecond from year 1 to 9999, in any session time
    /// zone, read through a column handle looked up once; infinity does not parse.
    @Test func exactTimestampsKeepEveryMicrosecond() async throws {
        try await TestDatabase.withConnection { connection throws in
            try await connection.execute(script: "SET TIME ZONE 'Asia/Kolkata'")
            let rows = try await connection.query("""
                SELECT t, (extract(epoch FROM t) * 1000000)::bigint AS micros
                FROM unnest(ARRAY['9999-12-31 23:59:59.999999+00', '0001-01-01 00:00:00.000001+00',
                                  '2043-07-14 04:37:03.865297+00', '1969-12-31 23:59:59.999999+00',
                                  '1970-01-01 00:00:00+00']::timestamptz[]) AS t
                """)
            let t = try rows.column("t"), micros = try rows.column("micros")
            for row in rows {
                #expect(try row.decode(t, as: PostgresTimestamp.self).microsecondsSince1970 == row.decode(micros, as: Int64.self))
            }
            let infinity = try await connection.query("SELECT 'infinity'::timestamptz AS t")
            #expect(throws: PostgresError.self) { try infinity[0].decode("t", as: PostgresTimestamp.self) }
            #expect(throws: PostgresError.self) { try rows.column("missing") }
        }
    }

    @Test func jsonAndByteaRoundTrip() async throws {
        let document = #"{"a": 1, "b": [true, null, "x\"y"]}"#
        try await TestDatabase.withConnection { connection throws in
            let rows = try await connection.query(
                "SELECT $1::json AS j, $1::jsonb AS jb, $2::bytea AS bytes", [PostgresJSON(document), Array(0...255) as [UInt8]])
            #expect(try rows[0].decode("j", as: [UInt8].self) == Array(document.utf8))
            #expect(try rows[0].decode("jb", as: PostgresJSON.self) == PostgresJSON(document))
            #expect(try rows[0].decode("bytes", as: [UInt8].self) == Array(0...255))
            #expect(try rows[0].decode("bytes", as: Data.self) == Data(0...255))
        }
    }

    @Test func optionalsRoundTrip() async throws {
        try await TestDatabase.withConnection { connection throws in
            let (some, none): (Int?, Int?) = (5, nil)
            let row = try await connection.query("SELECT $1::int4 AS a, $2::int4 AS b", [some, none])[0]
            #expect(try row.decode("a", as: Int?.self) == 5)
            #expect(try row.decode("b", as: Int?.self) == nil)
            #expect(try row.decode("a", as: String?.self) == "5")
        }
    }

    /// NULL and the empty string are both zero bytes long in libpq's result: only NULL decodes to nil.
    @Test func anEmptyStringIsNotNull() async throws {
        try await TestDatabase.withConnection { connection throws in
            let rows = try await connection.query("SELECT ''::text AS empty, NULL::text AS missing, 'x'::text AS one")
            let row = rows[0]
            #expect(try row.decode("empty", as: String?.self) == "")
            #expect(try row.decode("missing", as: String?.self) == nil)
            #expect(try row.decode("one", as: String?.self) == "x")
            #expect(!row.isNull("empty") && row.isNull("missing") && !row.isNull("one"))
            let empty = try rows.column("empty"), missing = try rows.column("missing")
            #expect(row.withText(empty) { $0.map(\.count) } == 0)
            #expect(row.withText(missing) { $0 == nil })
        }
    }

    @Test func nullIntoNonOptionalNamesTheColumn() async throws {
        try await TestDatabase.withConnection { connection throws in
            let row = try await connection.query("SELECT NULL::int AS maybe_count")[0]
            #expect { try row.decode("maybe_count", as: Int.self) } throws: { error in
                let error = error as? PostgresError
                return error?.kind == .decoding && error?.column == "maybe_count"
                    && error?.description.contains("maybe_count") == true
            }
        }
    }

    @Test func unknownColumnNamesTheColumn() async throws {
        try await TestDatabase.withConnection { connection throws in
            let row = try await connection.query("SELECT 1 AS present")[0]
            #expect { try row.decode("absent", as: Int.self) } throws: { error in
                let error = error as? PostgresError
                return error?.kind == .decoding && error?.column == "absent"
            }
        }
    }

    @Test func unparsableTextNamesTheColumn() async throws {
        try await TestDatabase.withConnection { connection throws in
            let row = try await connection.query("SELECT 'abc'::text AS word, 99999999999::int8 AS big")[0]
            #expect { try row.decode("word", as: Int.self) } throws: { ($0 as? PostgresError)?.column == "word" }
            #expect { try row.decode("big", as: Int32.self) } throws: { ($0 as? PostgresError)?.kind == .decoding }
        }
    }

    @Test func uniqueViolationIsTyped() async throws {
        let table = TestDatabase.uniqueName("uniq")
        try await TestDatabase.withConnection { connection throws in
            try await connection.execute(script: "CREATE TEMP TABLE \(table) (email text CONSTRAINT \(table)_email UNIQUE)")
            _ = try await connection.query("INSERT INTO \(table) VALUES ($1)", ["a@example.com"])
            await #expect { try await connection.query("INSERT INTO \(table) VALUES ($1)", ["a@example.com"]) } throws: {
                let error = $0 as? PostgresError
                return error?.kind == .server && error?.sqlState == "23505" && error?.isUniqueViolation == true
                    && error?.constraint == "\(table)_email" && error?.detail?.contains("a@example.com") == true
            }
            let rows = try await connection.query("INSERT INTO \(table) VALUES ($1), ($2)", ["b@example.com", "c@example.com"])
            #expect(rows.affectedRows == 2)
        }
    }

    private func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSinceReferenceDate * 1_000_000).rounded())
    }
}
