import TestSupport

/// Byte-assembly helpers for the fixtures, written independently of the module's own readers.
public enum Bytes {
    public static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    public static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    public static func be24(_ value: Int) -> [UInt8] { [UInt8(value >> 16 & 0xFF)] + be16(value) }
    public static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
    public static func le16(_ value: Int) -> [UInt8] { be16(value).reversed() }
    public static func le24(_ value: Int) -> [UInt8] { be24(value).reversed() }
    public static func le32(_ value: Int) -> [UInt8] { be32(value).reversed() }

    public static func readBE(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        bytes[offset ..< offset + count].reduce(0) { $0 << 8 | Int($1) }
    }

    public static func readLE(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        bytes[offset ..< offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// `count` seeded random bytes.
    public static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0 ..< count).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
    }

    /// CRC-32 (PNG), bit by bit: slow and obviously right.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0 ..< 8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the array.
    public func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= count else { return false }
        return (0 ... count - needle.count).contains { self[$0 ..< $0 + needle.count].elementsEqual(needle) }
    }

    public func contains(ascii text: String) -> Bool { contains(bytes: Array(text.utf8)) }
}
