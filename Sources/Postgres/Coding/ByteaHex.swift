/// The `bytea` hex text format: `\x` followed by two lowercase hex digits per byte.
enum ByteaHex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `\x` and the hex digits of `bytes`.
    static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var text = [UInt8]()
        text.reserveCapacity(2 + bytes.count * 2)
        text.append(UInt8(ascii: "\\"))
        text.append(UInt8(ascii: "x"))
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` starts with the hex-format prefix `\x`.
    static func isHex(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        text.count >= 2 && text[0] == UInt8(ascii: "\\") && text[1] == UInt8(ascii: "x")
    }

    /// The bytes of hex-format text, or `nil` if a digit is invalid or one is missing.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard isHex(text), text.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            guard let high = value(of: text[index]), let low = value(of: text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
