/// Builds one JSON object on one line, cheaply (logging runs on every request).
///
/// Strings are escaped per RFC 8259; integers, doubles and booleans are written as JSON numbers and literals;
/// any other value is written as its description, as a string.
struct JSONLine {
    private var text = "{"
    private var empty = true

    mutating func append(_ key: String, _ value: any Sendable) {
        if !empty { text += "," }
        empty = false
        JSONLine.appendString(key, to: &text)
        text += ":"
        switch value {
        case let string as String: JSONLine.appendString(string, to: &text)
        case let int as Int: text += String(int)
        case let int as Int64: text += String(int)
        case let int as Int32: text += String(int)
        case let bool as Bool: text += bool ? "true" : "false"
        case let double as Double: text += double.isFinite ? String(double) : "null"
        default: JSONLine.appendString(String(describing: value), to: &text)
        }
    }

    mutating func finish() -> String {
        text += "}"
        return text
    }

    static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
