/// Base64url without padding (RFC 4648 §5): how the API writes opaque values — secrets, cursors, positions, codes.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url, unpadded.
    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            output += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            output += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes; nil unless it is unpadded base64url of whole bytes (no `+`, `/`, `=` or other
    /// character, no length that leaves a lone character).
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt32] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard let value = value(of: byte) else { return nil }
            values.append(value)
        }
        guard values.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index ..< min(index + 4, values.count)]
            var n: UInt32 = 0
            for (offset, value) in chunk.enumerated() { n |= value << (18 - 6 * UInt32(offset)) }
            output.append(UInt8(n >> 16 & 255))
            if chunk.count > 2 { output.append(UInt8(n >> 8 & 255)) }
            if chunk.count > 3 { output.append(UInt8(n & 255)) }
            index += 4
        }
        return output
    }

    /// Whether `byte` is one of base64url's 64 characters.
    ///
    /// Inlinable and without an optional: every request's token is checked a byte at a time with it.
    @inlinable
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        // One bit per byte value, in two words: bytes 0–63 (`-`, `0`–`9`) and 64–127 (`A`–`Z`, `_`, `a`–`z`).
        let low: UInt64 = 0x3FF << 48 | 1 << 45
        let high: UInt64 = 0x3FF_FFFF << 1 | 1 << 31 | 0x3FF_FFFF << 33
        let word = byte < 64 ? low : byte < 128 ? high : 0
        return (word >> UInt64(byte & 63)) & 1 == 1
    }

    private static func value(of byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a") ... UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
