/// Lower-case hexadecimal text of bytes (RFC 4648's base 16), as signatures and seals are written.
public enum Base16 {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lower-case hexadecimal, two digits a byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
