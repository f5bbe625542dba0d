import Foundation

extension UUID: PostgresEncodable {
    /// The canonical hyphenated form, lower case (PostgreSQL accepts either case).
    public var postgresText: String { UUIDText.lowercase(self) }

    /// The canonical form's 36 bytes, written in place.
    public func appendPostgresText(to bytes: inout [UInt8]) -> Bool {
        UUIDText.append(self, to: &bytes)
        return true
    }
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
