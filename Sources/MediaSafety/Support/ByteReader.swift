/// Reads integers, four-character codes and strings from buffered bytes, refusing (nil) any read past `end`.
///
/// Every read of a structure parsed from hostile input goes through it: a length field can then never reach
/// outside the bytes that actually arrived.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int
    let littleEndian: Bool

    /// A reader of `bytes[start ..< end]` (clamped to the array).
    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil, littleEndian: Bool = false) {
        self.bytes = bytes
        self.end = min(max(end ?? bytes.count, 0), bytes.count)
        self.position = min(max(start, 0), self.end)
        self.littleEndian = littleEndian
    }

    var remaining: Int { end - position }

    /// `count` bytes as an unsigned integer in the reader's byte order; count 0 reads nothing and gives 0.
    mutating func uint(_ count: Int) -> UInt64? {
        guard count >= 0, count <= 8, count <= remaining else { return nil }
        var value: UInt64 = 0
        for index in 0 ..< count {
            let byte = UInt64(bytes[position + (littleEndian ? count - 1 - index : index)])
            value = value << 8 | byte
        }
        position += count
        return value
    }

    mutating func u8() -> UInt8? { uint(1).map { UInt8(truncatingIfNeeded: $0) } }
    mutating func u16() -> UInt16? { uint(2).map { UInt16(truncatingIfNeeded: $0) } }
    mutating func u32() -> UInt32? { uint(4).map { UInt32(truncatingIfNeeded: $0) } }
    mutating func u64() -> UInt64? { uint(8) }

    /// A four-character code.
    mutating func fourCC() -> FourCC? {
        guard remaining >= 4 else { return nil }
        defer { position += 4 }
        return FourCC(bytes, at: position)
    }

    /// Skips `count` bytes; false (and no move) when fewer remain.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        position += count
        return true
    }

    /// The bytes up to a NUL (which is consumed), or up to `end` when there is no NUL.
    mutating func cString() -> ArraySlice<UInt8> {
        let stop = bytes[position ..< end].firstIndex(of: 0) ?? end
        defer { position = min(stop + 1, end) }
        return bytes[position ..< stop]
    }
}

/// A four-character code: a RIFF chunk's, a PNG chunk's or an ISO-BMFF box's type.
struct FourCC: Hashable, Sendable, CustomStringConvertible {
    let value: UInt32

    init(_ text: StaticString) {
        var value: UInt32 = 0
        text.withUTF8Buffer { for byte in $0.prefix(4) { value = value << 8 | UInt32(byte) } }
        self.value = value
    }

    /// The code in `bytes[offset ..< offset + 4]`; the caller has checked the bounds.
    init(_ bytes: [UInt8], at offset: Int) {
        value = UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    var bytes: [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    var description: String {
        String(decoding: bytes.map { (0x20 ... 0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

extension [UInt8] {
    /// Whether the array starts with the UTF-8 bytes of `text`.
    func starts(withASCII text: StaticString) -> Bool {
        text.withUTF8Buffer { starts(with: $0) }
    }

    /// The big-endian integer of `count` bytes at `offset`; the caller has checked the bounds.
    func bigEndian(at offset: Int, count: Int) -> Int {
        var value = 0
        for index in offset ..< offset + count { value = value << 8 | Int(self[index]) }
        return value
    }

    /// The little-endian integer of `count` bytes at `offset`; the caller has checked the bounds.
    func littleEndian(at offset: Int, count: Int) -> Int {
        var value = 0
        for index in (offset ..< offset + count).reversed() { value = value << 8 | Int(self[index]) }
        return value
    }
}
