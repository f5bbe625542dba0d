import HTTPServer

/// Builds one JSON object on one line, cheaply (logging runs on every request): straight into bytes.
///
/// Strings are escaped per RFC 8259 (as `JSONBytes` escapes them); integers, doubles and booleans are written as JSON
/// numbers and literals; any other value is written as its description, as a string.
struct JSONLine: ~Copyable {
    private var json = JSONBytes(capacity: 192)
    private var empty = true

    init() {
        json.raw("{")
    }

    /// Appends `key` with a value of any type; strings, integers and doubles are written by the typed appends below.
    mutating func append(_ key: String, _ value: any Sendable) {
        switch value {
        case let string as String: return append(key, string)
        case let int as Int: return append(key, int)
        case let double as Double: return append(key, double)
        default: break
        }
        self.key(key)
        switch value {
        case let int as Int64: json.raw(contentsOf: String(int))
        case let int as Int32: json.raw(contentsOf: String(int))
        case let bool as Bool: json.bool(bool)
        default: json.string(String(describing: value))
        }
    }

    /// Appends `key` with a string value.
    mutating func append(_ key: String, _ value: String) {
        self.key(key)
        json.string(value)
    }

    /// Appends `key` with an integer value.
    mutating func append(_ key: String, _ value: Int) {
        self.key(key)
        json.raw(contentsOf: String(value))
    }

    /// Appends `key` with a number, `null` when not finite.
    mutating func append(_ key: String, _ value: Double) {
        self.key(key)
        json.raw(contentsOf: value.isFinite ? String(value) : "null")
    }

    /// Appends `key` with an RFC 3339 timestamp.
    mutating func append(_ key: String, microsecondsSince1970 micros: Int64) {
        self.key(key)
        json.timestamp(microsecondsSince1970: micros)
    }

    private mutating func key(_ key: String) {
        if !empty { json.raw(",") }
        empty = false
        json.string(key)
        json.raw(":")
    }

    mutating func finish() -> String {
        json.raw("}")
        return json.text
    }
}
