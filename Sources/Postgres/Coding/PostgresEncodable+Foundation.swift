import Foundation

extension UUID: PostgresEncodable {
    /// The canonical hyphenated form, lower case (PostgreSQL accepts either case).
    public var postgresText: String { UUIDText.lowercase(self) }
}

extension Date: PostgresEncodable {
    /// ISO 8601 in UTC with microseconds, e.g. `2026-11-30T11:42:20.123456Z`; finer precision is rounded.
    public var postgresText: String { TimestampText.format(self) }
}

extension Array: PostgresEncodable where Element == UInt8 {
    /// A `bytea` literal in hex format, `\x0aff…`. For JSON bytes, wrap them in ``PostgresJSON`` instead.
    public var postgresText: String { ByteaHex.encode(self) }
}

extension Data: PostgresEncodable {
    /// A `bytea` literal in hex format, `\x0aff…`. For JSON bytes, wrap them in ``PostgresJSON`` instead.
    public var postgresText: String { ByteaHex.encode(self) }
}
