import Glibc

/// A Swift value that can be bound as a query parameter, sent in PostgreSQL's text format.
///
/// Parameters are always bound (`$1`, `$2`, …), never spliced into SQL, so any text is safe to send. The text must
/// not contain a NUL byte: PostgreSQL cannot store one, and the query throws an `.encoding` error instead.
public protocol PostgresEncodable: Sendable {
    /// The value as PostgreSQL parses it in text format, e.g. `42`, `t`, `2026-11-30T11:42:20.123456Z`.
    var postgresText: String { get }

    /// Appends ``postgresText``'s UTF-8 to `bytes`, unless it holds a NUL byte (then `bytes` is left as it was and
    /// the answer is false). A type that can write its text directly (a UUID) skips the string in between.
    func appendPostgresText(to bytes: inout [UInt8]) -> Bool
}

extension PostgresEncodable {
    /// Appends ``postgresText``'s UTF-8, searched for a NUL and copied as one block of bytes.
    public func appendPostgresText(to bytes: inout [UInt8]) -> Bool {
        var text = postgresText
        return text.withUTF8 { utf8 -> Bool in
            if let start = utf8.baseAddress, memchr(start, 0, utf8.count) != nil { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
    }
}

extension String: PostgresEncodable {
    /// The string itself.
    public var postgresText: String { self }
}

extension Substring: PostgresEncodable {
    /// The substring's characters.
    public var postgresText: String { String(self) }
}

extension Int: PostgresEncodable {
    /// Decimal digits.
    public var postgresText: String { String(self) }
}

extension Int16: PostgresEncodable {
    /// Decimal digits.
    public var postgresText: String { String(self) }
}

extension Int32: PostgresEncodable {
    /// Decimal digits.
    public var postgresText: String { String(self) }
}

extension Int64: PostgresEncodable {
    /// Decimal digits.
    public var postgresText: String { String(self) }
}

extension Double: PostgresEncodable {
    /// The shortest text that reads back as the same `Double`; `NaN`, `Infinity` and `-Infinity` for the specials.
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return description
    }
}

extension Bool: PostgresEncodable {
    /// `true` or `false`.
    public var postgresText: String { self ? "true" : "false" }
}
