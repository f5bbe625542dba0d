/// A Swift type a result column can be decoded into, from PostgreSQL's text format.
///
/// Conform by parsing the text bytes; throw a `.decoding` ``PostgresError`` for text you cannot parse.
/// SQL NULL never reaches the initializer: it decodes to ``postgresNull``, and throws when that is `nil`,
/// so decode as `T?` where a column may be NULL.
public protocol PostgresDecodable: Sendable {
    /// Parses a non-NULL value. The buffer is only valid during the call; copy what you keep.
    init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError)

    /// The value SQL NULL decodes to, or `nil` when the type cannot represent NULL (the default).
    static var postgresNull: Self? { get }
}

extension PostgresDecodable {
    /// `nil`: NULL is a decoding error unless the type is `Optional`.
    public static var postgresNull: Self? { nil }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// Decodes the wrapped type.
    public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        self = .some(try Wrapped(postgresText: text))
    }

    /// `.some(nil)`: NULL decodes to `nil`.
    public static var postgresNull: Self? { .some(.none) }
}

extension PostgresError {
    /// A `.decoding` error for text that does not parse as `type`, quoting (a prefix of) the text.
    static func unparsable<T>(_ text: UnsafeBufferPointer<UInt8>, as type: T.Type) -> PostgresError {
        let shown = String(decoding: text.prefix(64), as: UTF8.self) + (text.count > 64 ? "…" : "")
        return PostgresError(.decoding, "cannot decode \"\(shown)\" as \(type)")
    }
}
