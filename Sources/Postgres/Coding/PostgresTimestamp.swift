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

    public static func < (lhs: PostgresTimestamp, rhs: PostgresTimestamp) -> Bool {
        lhs.microsecondsSince1970 < rhs.microsecondsSince1970
    }
}
