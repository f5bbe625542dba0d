/// A JSON document written straight into bytes, for responses assembled from text already in hand (a database
/// field's bytes, say) without decoding it into values and encoding those again.
///
/// What it writes matches `JSON.encode` byte for byte for the same values: strings escape `"`, `\` and the control
/// characters as it does (`\b \f \n \r \t`, else `\u00xx`) and keep `/` and every other character as they are;
/// timestamps are `RFC3339` strings. The caller supplies the structure, keys (sorted, as `JSON.encode` sorts them)
/// and separators.
public struct JSONBytes {
    /// The document so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty document with room for `capacity` bytes.
    public init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends `text` as it is (structure, keys, separators).
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `utf8` as it is.
    public mutating func raw(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: utf8)
    }

    /// Appends a JSON string holding the UTF-8 text `utf8`, quoted and escaped.
    public mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        var index = 0
        while index < utf8.count {
            // Eight bytes at a time while none of them needs an escape (most text has none).
            if index + 8 <= utf8.count,
               !JSONBytes.needsEscape(UnsafeRawPointer(utf8.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart ..< index])) }
            index += 1
            runStart = index
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            default:
                let hex: StaticString = "0123456789abcdef"
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hex.utf8Start[Int(byte >> 4)])
                bytes.append(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes of `word` is a control character, `"` or `\` (bitwise, without a branch per
    /// byte: a byte below 0x20 and a byte equal to 0x22 or 0x5C each set its high bit in the result; bytes of 0x80
    /// and above, which need no escape, are masked out).
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let below0x20 = (word &- ones &* 0x20)
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        let hits = below0x20 | (quote &- ones) | (backslash &- ones)
        return hits & ~word & highs != 0
    }

    /// Appends `text` as a JSON string.
    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string($0) }
    }

    /// Appends `text` as it is: a number's digits, a literal.
    public mutating func raw(contentsOf text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends a JSON string holding `utf8`, or `null` when it is nil.
    public mutating func stringOrNull(_ utf8: UnsafeBufferPointer<UInt8>?) {
        if let utf8 { string(utf8) } else { raw("null") }
    }

    /// Appends `utf8` between quotes, unescaped: for text known to need no escape (a timestamp, an identifier).
    public mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a quoted RFC 3339 timestamp (`"2026-11-30T11:42:20.123456Z"`).
    public mutating func timestamp(microsecondsSince1970 micros: Int64) {
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(microsecondsSince1970: micros, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }
}
