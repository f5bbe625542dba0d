/// A PNG with IHDR, Exif (eXIf), XMP (iTXt), a tEXt comment, tIME, pHYs and two IDATs, real CRCs throughout.
public enum PNGFixture {
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Bytes.ascii(type) + data
        return Bytes.be32(data.count) + typed + Bytes.be32(Int(Bytes.crc32(typed)))
    }

    public static let ihdr = chunk("IHDR", Bytes.be32(300) + Bytes.be32(200) + [8, 2, 0, 0, 0])
    public static let exif = chunk("eXIf", ExifFixture.tiff(littleEndian: true))
    public static let xmp = chunk("iTXt", Bytes.ascii("XML:com.adobe.xmp") + [0, 0, 0, 0, 0] + ExifFixture.xmpPacket)
    public static let text = chunk("tEXt", Bytes.ascii("Comment") + [0] + Bytes.ascii("taken at home"))
    public static let time = chunk("tIME", [0x07, 0xE8, 5, 17, 12, 30, 0])
    public static let phys = chunk("pHYs", Bytes.be32(2835) + Bytes.be32(2835) + [1])
    public static let firstData = chunk("IDAT", Bytes.random(600, seed: 21))
    public static let secondData = chunk("IDAT", Bytes.random(400, seed: 22))
    public static let end = chunk("IEND", [])

    public static func make() -> Fixture {
        let bytes = signature + ihdr + exif + xmp + text + time + phys + firstData + secondData + end
        let expected = signature + ihdr + phys + firstData + secondData + end
        return Fixture(name: "png", type: .png, bytes: bytes, expected: expected, size: .init(width: 300, height: 200),
                       removed: ["EXIF", "XMP", "text chunks", "timestamp"])
    }
}
