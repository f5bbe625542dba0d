/// Lower-case hexadecimal text of bytes (RFC 4648's base 16), as signatures and seals are written.
public enum Base16 {
    /// `bytes` as lower-case hexadecimal, two digits a byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) { return text }
        return Array(bytes).withUnsafeBytes { encode($0) }
    }

    /// `bytes` as lower-case hexadecimal, written straight into the string's storage.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { write(bytes, into: $0) }
    }

    /// Writes `bytes` as lower-case hexadecimal to the start of `out` (which holds at least twice as many); returns
    /// how many bytes it wrote.
    @discardableResult
    public static func write(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(out.count >= bytes.count * 2, "no room for the hexadecimal text")
        let digits: StaticString = "0123456789abcdef"
        for (index, byte) in bytes.enumerated() {
            out[2 * index] = digits.utf8Start[Int(byte >> 4)]
            out[2 * index + 1] = digits.utf8Start[Int(byte & 0x0F)]
        }
        return bytes.count * 2
    }
}
