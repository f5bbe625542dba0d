/// WebPs: extended (VP8X with the EXIF and XMP flags, a lossy VP8 bitstream, EXIF and XMP chunks of odd sizes),
/// and simple lossless (VP8L alone).
public enum WebPFixture {
    /// A chunk with its pad byte when the payload is odd.
    public static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        Bytes.ascii(fourCC) + Bytes.le32(payload.count) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    public static func riff(_ chunks: [UInt8]) -> [UInt8] {
        Bytes.ascii("RIFF") + Bytes.le32(4 + chunks.count) + Bytes.ascii("WEBP") + chunks
    }

    public static func extendedHeader(flags: UInt8) -> [UInt8] {
        chunk("VP8X", [flags, 0, 0, 0] + Bytes.le24(639) + Bytes.le24(479))
    }

    /// A key frame header (640×480) and made-up data: 801 bytes, odd.
    public static let lossyPayload = [0x50, 0x12, 0x00, 0x9D, 0x01, 0x2A] + Bytes.le16(640) + Bytes.le16(480)
        + Bytes.random(791, seed: 41)
    public static let exifPayload = ExifFixture.tiff(littleEndian: true) + [0x00]  // 159 bytes, odd
    public static let xmpPayload = ExifFixture.xmpPacket + (ExifFixture.xmpPacket.count % 2 == 1 ? [] : [0x20])  // odd

    public static func make() -> Fixture {
        let iccp = chunk("ICCP", Bytes.random(48, seed: 42))
        let bytes = riff(extendedHeader(flags: 0x2C) + iccp + chunk("VP8 ", lossyPayload) + chunk("EXIF", exifPayload)
            + chunk("XMP ", xmpPayload))
        let blankExif = Bytes.ascii("JUNK") + Bytes.le32(exifPayload.count) + [UInt8](repeating: 0, count: 160)
        let blankXMP = Bytes.ascii("JUNK") + Bytes.le32(xmpPayload.count)
            + [UInt8](repeating: 0, count: xmpPayload.count + 1)
        let expected = riff(extendedHeader(flags: 0x20) + iccp + chunk("VP8 ", lossyPayload) + blankExif + blankXMP)
        return Fixture(name: "webp", type: .webp, bytes: bytes, expected: expected,
                       size: .init(width: 640, height: 480), removed: ["EXIF", "XMP"])
    }

    /// VP8L alone, 100×50.
    public static func lossless() -> Fixture {
        let bits = (100 - 1) | (50 - 1) << 14 | 1 << 28
        let bytes = riff(chunk("VP8L", [0x2F] + Bytes.le32(bits) + Bytes.random(300, seed: 43)))
        return Fixture(name: "webp lossless", type: .webp, bytes: bytes, expected: bytes,
                       size: .init(width: 100, height: 50), removed: [])
    }
}
