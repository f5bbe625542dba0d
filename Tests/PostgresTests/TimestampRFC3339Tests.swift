import Postgres
import Testing

/// `PostgresTimestamp.withRFC3339` rearranges the session's ISO UTC text into RFC 3339 with six fraction digits, and
/// declines every other shape so the caller falls back to the exact parse.
@Suite(.timeLimit(.minutes(5))) struct TimestampRFC3339Tests {
    static func rfc3339(_ text: String) -> String? {
        var result: String?
        var text = text
        let written = text.withUTF8 { utf8 in
            PostgresTimestamp.withRFC3339(postgresText: utf8) { result = String(decoding: $0, as: UTF8.self) }
        }
        #expect(written == (result != nil))
        return result
    }

    @Test func everyFractionLengthIsPaddedToMicroseconds() {
        #expect(Self.rfc3339("2026-11-30 11:42:20+00") == "2026-11-30T11:42:20.000000Z")
        #expect(Self.rfc3339("2026-11-30 11:42:20.1+00") == "2026-11-30T11:42:20.100000Z")
        #expect(Self.rfc3339("2026-11-30 11:42:20.12+00") == "2026-11-30T11:42:20.120000Z")
        #expect(Self.rfc3339("2026-11-30 11:42:20.123+00") == "2026-11-30T11:42:20.123000Z")
        #expect(Self.rfc3339("2026-11-30 11:42:20.1234+00") == "2026-11-30T11:42:20.123400Z")
        #expect(Self.rfc3339("2026-11-30 11:42:20.12345+00") == "2026-11-30T11:42:20.123450Z")
        #expect(Self.rfc3339("0001-01-01 00:00:00.000001+00") == "0001-01-01T00:00:00.000001Z")
        #expect(Self.rfc3339("9999-12-31 23:59:59.999999+00") == "9999-12-31T23:59:59.999999Z")
    }

    @Test func otherShapesAreDeclined() {
        for text in ["2026-11-30 11:42:20+05:30", "2026-11-30 11:42:20.5+01", "0044-03-15 12:00:00+00 BC",
                     "12026-11-30 11:42:20+00", "2026-11-30 11:42:20.+00", "2026-11-30", "infinity", "-infinity",
                     "2026-11-30T11:42:20Z", "2026-11-30 11:42:20.1234567+00", ""] {
            #expect(Self.rfc3339(text) == nil, "\(text)")
        }
    }
}
