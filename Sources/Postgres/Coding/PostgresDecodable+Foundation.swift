import Foundation

extension UUID: PostgresDecodable {
    /// The `uuid` type's hyphenated text.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        guard let uuid = UUIDText.parse(text) else {
            throw .unparsable(text, as: UUID.self)
        }
        self = uuid
    }
}

extension Date: PostgresDecodable {
    /// `timestamptz` text in ISO style (`2026-11-30 11:42:20.123456+00`, any offset), `timestamp` (read as UTC),
    /// `date` (midnight UTC), and `±infinity` (as `distantFuture`/`distantPast`).
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        guard let date = TimestampText.parse(text) else { throw .unparsable(text, as: Date.self) }
        self = date
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// `bytea` hex text (`\x…`) decodes to its bytes; any other text (`json`, `jsonb`, `text`) to its UTF-8 bytes.
    ///
    /// JSON text never starts with a backslash, so the two cannot be confused.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        guard ByteaHex.isHex(text) else {
            self = Array(text)
            return
        }
        guard let bytes = ByteaHex.decode(text) else { throw .unparsable(text, as: [UInt8].self) }
        self = bytes
    }
}

extension Data: PostgresDecodable {
    /// Same rules as `[UInt8]`: `bytea` hex text decodes to its bytes, any other text to its UTF-8 bytes.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        self = Data(try [UInt8](postgresText: text))
    }
}
