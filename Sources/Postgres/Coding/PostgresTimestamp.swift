/// A `timestamptz` (or `timestamp`, read as UTC) as exact microseconds since 1970-01-01 UTC: PostgreSQL's own
/// precision, which a `Date` (a `Double` of seconds) loses for times far from 2001.
public struct PostgresTimestamp: PostgresDecodable, Hashable, Comparable {
    /// Microseconds since 1970-01-01 00:00:00 UTC (negative before).
    public let microsecondsSince1970: Int64

    /// The timestamp `microsecondsSince1970` microseconds after the epoch.
    public init(microsecondsSince1970: Int64) {
        self.microsecondsSince1970 = microsecondsSince1970
    }

    /// ISO text as the session prints it (`2026-11-30 11:42:20.123456+00`, any offset); `±infinity` does not parse.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        guard let micros = TimestampText.microseconds(text) else { throw .unparsable(text, as: PostgresTimestamp.self) }
        microsecondsSince1970 = micros
    }

    /// Orders timestamps in time.
    public static func < (lhs: PostgresTimestamp, rhs: PostgresTimestamp) -> Bool {
        lhs.microsecondsSince1970 < rhs.microsecondsSince1970
    }
}

extension PostgresTimestamp {
    /// Calls `body` with the RFC 3339 form (`2026-11-30T11:42:20.123456Z`, microseconds always written) of a
    /// timestamp's text as this library's sessions print it (ISO style in UTC: `2026-11-30 11:42:20.123456+00`, the
    /// fraction trimmed of trailing zeros or absent), rearranging the bytes without parsing them. Returns false, and
    /// does not call `body`, for any other shape (a year past 9999 or before 1, another offset): decode the column
    /// as a `PostgresTimestamp` then.
    public static func withRFC3339(postgresText text: UnsafeBufferPointer<UInt8>,
                                   _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        // YYYY-MM-DD HH:MM:SS[.f{1,6}]+00
        let count = text.count
        guard count >= 22, count <= 29, count != 23, text[10] == UInt8(ascii: " "),
              text[count - 3] == UInt8(ascii: "+"), text[count - 2] == UInt8(ascii: "0"), text[count - 1] == UInt8(ascii: "0"),
              text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":")
        else { return false }
        let fractionDigits = count == 22 ? 0 : count - 23
        guard fractionDigits == 0 || text[19] == UInt8(ascii: ".") else { return false }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 27) { out in
            for index in 0 ..< 19 { out[index] = text[index] }
            out[10] = UInt8(ascii: "T")
            out[19] = UInt8(ascii: ".")
            for index in 0 ..< 6 { out[20 + index] = index < fractionDigits ? text[20 + index] : UInt8(ascii: "0") }
            out[26] = UInt8(ascii: "Z")
            body(UnsafeBufferPointer(out))
        }
        return true
    }
}
