/// A one-dimensional array parameter (`$1::text[]`, `$1::uuid[]`, `$1::bigint[]`), sent as an array literal in
/// which every element is quoted and escaped, so any text (commas, braces, quotes, backslashes, the word NULL) arrives
/// as it was; nil elements are SQL NULL.
public struct PostgresArray: PostgresEncodable {
    /// The elements' text forms; nil for NULL.
    public let elements: [String?]

    /// An array of `values`, each bound as its own text form.
    public init(_ values: [(any PostgresEncodable)?]) {
        elements = values.map { $0?.postgresText }
    }

    /// The literal: `{"a","b\"c",NULL}`. Built as UTF-8 bytes: a quote or backslash is escaped wherever it occurs,
    /// and neither byte can be part of a multi-byte character, so the rest is copied as it is.
    public var postgresText: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + elements.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
        bytes.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let element else {
                bytes.append(contentsOf: "NULL".utf8)
                continue
            }
            bytes.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
