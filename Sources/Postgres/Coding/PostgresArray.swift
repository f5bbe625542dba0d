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

    /// The literal: `{"a","b\"c",NULL}`.
    public var postgresText: String {
        var text = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            guard let element else {
                text += "NULL"
                continue
            }
            text += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
    }
}
