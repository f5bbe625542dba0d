/// Checks that a request body is JSON exactly as RFC 8259 defines it, before any decoder sees it, and refuses what
/// the decoders disagree on or the database cannot store.
///
/// Foundation's reader is lenient: it accepts a trailing comma, and with a duplicated key the first one wins, while
/// Python, JavaScript and Go keep the last. A tenant backend that validated `{"role":"agent","role":"customer"}`
/// with one of those would then see a different request from the one Switchboard acts on. So: no duplicate keys,
/// no trailing commas, no comments, no leading zeros, no unescaped control characters, no lone surrogates, and —
/// because PostgreSQL's `text` cannot hold it — no U+0000 in any string. Nesting is limited, so a deep body cannot
/// exhaust the stack.
public enum StrictJSON {
    /// Why a body was refused, and where (`field` is a dotted path such as `items.2.title`, nil for the body itself).
    public struct Violation: Error, Equatable, Sendable {
        /// What is wrong, for a person to read.
        public let message: String
        /// Where: a dotted path such as `items.2.title`, nil for the body itself; it becomes the 400's `parameter`.
        public let field: String?
        /// Where in the text, 1-based: the line, and the character within it (nil when not known).
        public let line: Int?
        /// The character within `line`, 1-based, counting Unicode scalars.
        public let column: Int?

        /// A violation `message` at `field`, found at `line` and `column` of the body.
        public init(message: String, field: String?, line: Int? = nil, column: Int? = nil) {
            self.message = message
            self.field = field
            self.line = line
            self.column = column
        }

        /// What the 400's `detail` says: where, then what ("Line 1, column 12: …").
        public var detail: String {
            guard let line, let column else { return message }
            return "Line \(line), column \(column): \(message)"
        }
    }

    /// Deepest nesting accepted.
    public static let maxDepth = 64

    /// What a valid body's top level holds, for checks a decoder cannot make: whether it is an object, its keys in
    /// order (empty when the body is not an object), the text of those whose value is a number, and the values of
    /// those whose value is a string.
    public struct Outline: Sendable, Equatable {
        /// Whether the body is an object.
        public var isObject = false
        /// The top-level object's keys, in order.
        public var keys: [String] = []
        /// The top-level keys whose value is a number, with the number as written (`1.5`, `1e30`).
        public var numbers: [String: String] = [:]
        /// The top-level keys whose value is a string, with the string (escapes decoded).
        public var strings: [String: String] = [:]
    }

    /// Throws the first violation found in `bytes`; returns the body's outline, so that a caller can refuse fields
    /// it does not know and say which number a decoder could not take.
    @discardableResult
    public static func validate(_ bytes: [UInt8]) throws(Violation) -> Outline {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        try reader.value(depth: 0)
        reader.skipWhitespace()
        if reader.index < bytes.count { throw reader.fail("Unexpected text after the JSON value: \(reader.found).") }
        return reader.outline
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var path: [String] = []
        var outline = Outline()

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ message: String) -> Violation {
            var line = 1, column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return Violation(message: message, field: path.isEmpty ? nil : path.joined(separator: "."),
                             line: line, column: column)
        }

        /// What stands at the reading position, for a message: `'x'`, `the end of the body`, or a byte in hex.
        var found: String {
            guard let byte = current else { return "the end of the body" }
            if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            if byte == 0x20 { return "a space" }
            return "the byte 0x" + String(byte, radix: 16, uppercase: true)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func value(depth: Int) throws(Violation) {
            guard depth <= StrictJSON.maxDepth else { throw fail("The body nests deeper than \(StrictJSON.maxDepth) levels.") }
            switch current {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case .some(let byte) where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39): try number()
            case nil: throw fail("The body ends where a JSON value should be.")
            case UInt8(ascii: "'"): throw fail("Expected a JSON value; found ''' (JSON strings take double quotes).")
            default: throw fail("Expected a JSON value (an object, array, string, number, true, false or null); found \(found).")
            }
        }

        mutating func object(depth: Int) throws(Violation) {
            if depth == 0 { outline.isObject = true }
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return }
            // The keys seen so far, for refusing a repeated one: compared one by one while there are few (a set, made
            // for every object, cost more than the rest of a one-field body's check), in a set once there are many.
            var keys: [String] = []
            var manyKeys: Set<String>?
            var afterComma = false
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else {
                    if afterComma && current == UInt8(ascii: "}") { throw fail("A trailing comma before '}' is not allowed.") }
                    if current == UInt8(ascii: "'") { throw fail("An object key must be a string in double quotes, not single ones.") }
                    throw fail("An object key must be a string in double quotes; found \(found).")
                }
                let key = try string()
                path.append(key)
                let repeated: Bool
                if manyKeys != nil {
                    repeated = !manyKeys!.insert(key).inserted
                } else {
                    repeated = keys.contains(key)
                    keys.append(key)
                    if keys.count == Self.keysComparedOneByOne { manyKeys = Set(keys) }
                }
                guard !repeated else { throw fail("The key '\(key)' appears more than once.") }
                if depth == 0 { outline.keys.append(key) }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fail("Expected ':' after the key '\(key)'; found \(found).") }
                index += 1
                skipWhitespace()
                let start = index
                if depth == 0 && current == UInt8(ascii: "\"") {
                    outline.strings[key] = try string()
                } else {
                    try value(depth: depth + 1)
                }
                if depth == 0, let first = bytes[start...].first, first == UInt8(ascii: "-") || (0x30 ... 0x39).contains(first) {
                    outline.numbers[key] = String(decoding: bytes[start ..< index], as: UTF8.self)
                }
                path.removeLast()
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1; afterComma = true
                case UInt8(ascii: "}"): index += 1; return
                default: throw fail("Expected ',' or '}' after a value in an object; found \(found).")
                }
            }
        }

        /// Up to how many keys of an object are checked for repeats by comparing them one by one.
        static let keysComparedOneByOne = 16

        mutating func array(depth: Int) throws(Violation) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return }
            var position = 0
            while true {
                skipWhitespace()
                path.append(String(position))
                try value(depth: depth + 1)
                path.removeLast()
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","):
                    index += 1
                    skipWhitespace()
                    if current == UInt8(ascii: "]") { throw fail("A trailing comma before ']' is not allowed.") }
                case UInt8(ascii: "]"): index += 1; return
                default: throw fail("Expected ',' or ']' after a value in an array; found \(found).")
                }
                position += 1
            }
        }

        mutating func literal(_ word: StaticString) throws(Violation) {
            let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard index + expected.count <= bytes.count, bytes[index ..< index + expected.count].elementsEqual(expected) else {
                throw fail("Expected '\(word)'; found \(found).")
            }
            index += expected.count
        }

        mutating func number() throws(Violation) {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, first >= 0x30 && first <= 0x39 else { throw fail("A number needs digits.") }
            index += 1
            if first == 0x30, let next = current, next >= 0x30 && next <= 0x39 { throw fail("A number must not have leading zeros.") }
            skipDigits()
            if current == UInt8(ascii: ".") {
                index += 1
                guard requireDigit() else { throw fail("A number needs digits after its decimal point.") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard requireDigit() else { throw fail("A number needs digits in its exponent.") }
            }
        }

        mutating func skipDigits() {
            while let byte = current, byte >= 0x30 && byte <= 0x39 { index += 1 }
        }

        mutating func requireDigit() -> Bool {
            guard let byte = current, byte >= 0x30 && byte <= 0x39 else { return false }
            skipDigits()
            return true
        }

        /// Reads a string and returns its value (as far as the checks need it: escapes decoded, UTF-8 validated).
        /// The bytes between escapes are checked one by one but copied into the value as a run, not scalar by scalar.
        mutating func string() throws(Violation) -> String {
            index += 1
            var value = ""
            var runStart = index
            while true {
                guard let byte = current else { throw fail("A string is not closed.") }
                switch byte {
                case UInt8(ascii: "\""):
                    appendRun(from: runStart, to: &value)
                    index += 1
                    return value
                case UInt8(ascii: "\\"):
                    appendRun(from: runStart, to: &value)
                    index += 1
                    value.unicodeScalars.append(try escape())
                    runStart = index
                case 0x00 ..< 0x20:
                    throw fail(byte == 0 ? "Strings must not contain U+0000." : "Control characters in strings must be escaped.")
                case 0x00 ..< 0x80:
                    index += 1
                default:
                    _ = try utf8Scalar()
                }
            }
        }

        /// Appends the bytes from `start` to the current index, checked UTF-8 without escapes, to `value`.
        private func appendRun(from start: Int, to value: inout String) {
            guard start < index else { return }
            let run = bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start ..< index]), as: UTF8.self) }
            if value.isEmpty { value = run } else { value += run }
        }

        mutating func escape() throws(Violation) -> Unicode.Scalar {
            guard let byte = current else { throw fail("A string is not closed.") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let unit = try hex4()
                if unit == 0 { throw fail("Strings must not contain U+0000.") }
                if (0xDC00 ... 0xDFFF).contains(unit) { throw fail("A string holds a lone surrogate (\\u\(hex(unit))).") }
                if (0xD800 ... 0xDBFF).contains(unit) {
                    guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("A string holds a lone surrogate (\\u\(hex(unit))).")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00 ... 0xDFFF).contains(low) else { throw fail("A string holds a lone surrogate (\\u\(hex(unit))).") }
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
                }
                return Unicode.Scalar(unit)!
            default:
                throw fail("A string holds an invalid escape.")
            }
        }

        mutating func hex4() throws(Violation) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("A \\u escape needs four hex digits.") }
            var value: UInt32 = 0
            for byte in bytes[index ..< index + 4] {
                let digit: UInt32
                switch byte {
                case 0x30 ... 0x39: digit = UInt32(byte - 0x30)
                case 0x41 ... 0x46: digit = UInt32(byte - 0x41 + 10)
                case 0x61 ... 0x66: digit = UInt32(byte - 0x61 + 10)
                default: throw fail("A \\u escape needs four hex digits.")
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }

        func hex(_ unit: UInt32) -> String {
            let digits = String(unit, radix: 16, uppercase: false)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }

        /// One multi-byte UTF-8 sequence, validated (no overlongs, no surrogates, nothing past U+10FFFF).
        mutating func utf8Scalar() throws(Violation) -> Unicode.Scalar {
            let lead = bytes[index]
            let (count, minimum, initial): (Int, UInt32, UInt32)
            switch lead {
            case 0xC2 ... 0xDF: (count, minimum, initial) = (2, 0x80, UInt32(lead & 0x1F))
            case 0xE0 ... 0xEF: (count, minimum, initial) = (3, 0x800, UInt32(lead & 0x0F))
            case 0xF0 ... 0xF4: (count, minimum, initial) = (4, 0x10000, UInt32(lead & 0x07))
            default: throw fail("The body is not valid UTF-8.")
            }
            guard index + count <= bytes.count else { throw fail("The body is not valid UTF-8.") }
            var value = initial
            for byte in bytes[index + 1 ..< index + count] {
                guard byte & 0xC0 == 0x80 else { throw fail("The body is not valid UTF-8.") }
                value = value << 6 | UInt32(byte & 0x3F)
            }
            guard value >= minimum, let scalar = Unicode.Scalar(value) else { throw fail("The body is not valid UTF-8.") }
            index += count
            return scalar
        }
    }
}
