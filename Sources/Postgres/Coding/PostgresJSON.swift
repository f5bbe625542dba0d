/// Raw JSON text, bound as a parameter or decoded from a `json`/`jsonb` column without interpretation.
///
/// Binding sends the bytes as text; the statement decides the type (`$1::jsonb`, or the target column's type).
/// The bytes must be valid UTF-8 JSON; the server rejects anything else with a `.server` error.
public struct PostgresJSON: PostgresEncodable, PostgresDecodable, Hashable {
    /// The UTF-8 bytes of the JSON document.
    public var bytes: [UInt8]

    /// Wraps already-serialized JSON bytes (for example the output of `JSONEncoder`).
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Wraps JSON text.
    public init(_ text: String) {
        self.bytes = Array(text.utf8)
    }

    /// The JSON text as sent to the server.
    public var postgresText: String { String(decoding: bytes, as: UTF8.self) }

    /// Copies the column's text as is; `jsonb` output is normalized by the server (key order, whitespace).
    public init(postgresText text: UnsafeBufferPointer<UInt8>) {
        self.bytes = Array(text)
    }
}
