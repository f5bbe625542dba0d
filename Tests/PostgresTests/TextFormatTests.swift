import Foundation
import Testing
@testable import Postgres

@Suite(.timeLimit(.minutes(5)))
struct TextFormatTests {
    func parse(_ text: String) -> Date? {
        Array(text.utf8).withUnsafeBufferPointer { TimestampText.parse($0) }
    }

    func decode<T: PostgresDecodable>(_ text: String, as type: T.Type) throws -> T {
        try Array(text.utf8).withUnsafeBufferPointer { try T(postgresText: $0) }
    }

    let reference = Date(timeIntervalSince1970: 1_796_038_940)  // 2026-11-30 11:42:20 UTC

    @Test func parsesTimestamptzInEveryShapePostgresPrints() {
        #expect(parse("2026-11-30 11:42:20+00") == reference)
        #expect(parse("2026-11-30 11:42:20.5+00") == reference + 0.5)
        #expect(parse("2026-11-30 17:12:20+05:30") == reference)
        #expect(parse("2026-11-30 06:42:20-05") == reference)
        #expect(parse("2026-11-30 11:51:41+00:09:21") == reference)
        #expect(parse("2026-11-30T11:42:20Z") == reference)
        #expect(parse("2026-11-30 11:42:20") == reference)
        #expect(parse("2026-11-30") == reference - (11 * 3600 + 42 * 60 + 20))
        #expect(parse("infinity") == .distantFuture)
        #expect(parse("-infinity") == .distantPast)
        #expect(parse("0001-01-01 00:00:00+00") == Date(timeIntervalSince1970: -62_135_596_800))
        #expect(parse("0001-12-31 00:00:00+00 BC") == Date(timeIntervalSince1970: -62_135_596_800 - 86_400))
    }

    @Test func microsecondsAreExact() throws {
        let date = try #require(parse("2026-11-30 11:42:20.123456+00"))
        #expect(TimestampText.format(date) == "2026-11-30T11:42:20.123456Z")
        let early = try #require(parse("1969-12-31 23:59:59.000001+00"))
        #expect(TimestampText.format(early) == "1969-12-31T23:59:59.000001Z")
    }

    @Test func rejectsMalformedTimestamps() {
        for text in ["", "2026-11-30 11:42", "2026-02-30", "2026-11-30 11:42:20.", "2026-11-30 11:42:20+5", "26-11-30", "2026-11-30x"] {
            #expect(parse(text) == nil, "\(text)")
        }
    }

    @Test func formattedDatesParseBack() {
        for seconds in stride(from: -80_000_000_000.0, through: 200_000_000_000.0, by: 7_777_777_777.123) {
            let date = Date(timeIntervalSince1970: seconds)
            let text = TimestampText.format(date)
            let parsed = Array(text.utf8).withUnsafeBufferPointer { TimestampText.parse($0) }
            #expect(parsed.map { abs($0.timeIntervalSince(date)) < 0.000_001 } == true, "\(text)")
        }
    }

    @Test func civilDatesMatchKnownDays() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).daysSinceEpoch == 0)
        #expect(CivilDate(year: 2000, month: 3, day: 1).daysSinceEpoch == 11_017)
        #expect(CivilDate(daysSinceEpoch: -1) == CivilDate(year: 1969, month: 12, day: 31))
        #expect(CivilDate(year: 2024, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2023, month: 2, day: 29).isValid)
    }

    @Test func integersParseWithoutOverflow() throws {
        #expect(try decode("-9223372036854775808", as: Int64.self) == .min)
        #expect(try decode("+17", as: Int32.self) == 17)
        #expect(throws: PostgresError.self) { try decode("9223372036854775808", as: Int64.self) }
        #expect(throws: PostgresError.self) { try decode("32768", as: Int16.self) }
        #expect(throws: PostgresError.self) { try decode("-", as: Int.self) }
        #expect(throws: PostgresError.self) { try decode("1.0", as: Int.self) }
    }

    @Test func byteaHexRoundTrips() throws {
        let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xff]
        #expect(bytes.postgresText == #"\x00017f80ff"#)
        #expect(try decode(#"\x00017F80ff"#, as: [UInt8].self) == bytes)
        #expect(try decode(#"{"a":1}"#, as: [UInt8].self) == Array(#"{"a":1}"#.utf8))
        #expect(throws: PostgresError.self) { try decode(#"\x0"#, as: [UInt8].self) }
    }

    @Test func scalarsEncodeAsPostgresReadsThem() {
        #expect(true.postgresText == "true")
        #expect(Double.nan.postgresText == "NaN")
        #expect((-Double.infinity).postgresText == "-Infinity")
        #expect(0.1.postgresText == "0.1")
        #expect(Date(timeIntervalSince1970: 0).postgresText == "1970-01-01T00:00:00.000000Z")
    }
}
