/// An animated-style GIF: global color table, NETSCAPE2.0 looping, a comment, ImageMagick IPTC, a graphic control
/// extension, one image, and XMP written the way Adobe does (raw packet, then the 258-byte "magic trailer").
public enum GIFFixture {
    public static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var blocks: [UInt8] = []
        var rest = data[...]
        while !rest.isEmpty {
            let part = rest.prefix(255)
            blocks += [UInt8(part.count)] + part
            rest = rest.dropFirst(part.count)
        }
        return blocks + [0]
    }

    public static let header = Bytes.ascii("GIF89a") + Bytes.le16(320) + Bytes.le16(240) + [0x91, 0, 0]
    public static let colorTable = Bytes.random(12, seed: 31)
    public static let looping = [0x21, 0xFF, 0x0B] + Bytes.ascii("NETSCAPE2.0") + [3, 1, 0, 0, 0]
    public static let comment = [0x21, 0xFE] + subBlocks(Bytes.ascii("taken at home, 48.8584 N 2.2945 E"))
    public static let iptc = [0x21, 0xFF, 0x0B] + Bytes.ascii("MGK8BIM0000") + subBlocks(Bytes.ascii("8BIM Paris"))
    /// 0x01, 0xFF down to 0x01, then 0x00 0x00: whichever byte a reader lands on as a length, it ends at the last 0.
    public static let magicTrailer: [UInt8] = [0x01] + (1 ... 255).reversed().map { UInt8($0) } + [0x00, 0x00]
    public static let xmp = [0x21, 0xFF, 0x0B] + Bytes.ascii("XMP DataXMP") + ExifFixture.xmpPacket + magicTrailer
    public static let graphicControl: [UInt8] = [0x21, 0xF9, 0x04, 0x00, 0x0A, 0x00, 0x00, 0x00]
    public static let imageData = [0x02] + subBlocks(Bytes.random(600, seed: 32))
    public static let image = [0x2C] + Bytes.le16(0) + Bytes.le16(0) + Bytes.le16(320) + Bytes.le16(240) + [0x00] + imageData

    public static func make() -> Fixture {
        let bytes = header + colorTable + looping + comment + iptc + graphicControl + image + xmp + [0x3B]
        let expected = header + colorTable + looping + graphicControl + image + [0x3B]
        return Fixture(name: "gif", type: .gif, bytes: bytes, expected: expected, size: .init(width: 320, height: 240),
                       removed: ["comment", "IPTC", "XMP"])
    }
}
