/// JPEGs the way phones write them: JFIF, Exif with orientation and GPS, XMP, ICC, IPTC, a comment, two scans with
/// a (hostile) XMP segment between them; optionally an MPF index and a second image after EOI.
public enum JPEGFixture {
    public static func segment(_ code: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, code] + Bytes.be16(payload.count + 2) + payload
    }

    /// Entropy-coded data: random bytes with every 0xFF stuffed, and restart markers now and then.
    public static func entropy(_ count: Int, seed: UInt64) -> [UInt8] {
        var data: [UInt8] = []
        var restart: UInt8 = 0
        for (index, byte) in Bytes.random(count, seed: seed).enumerated() {
            data.append(byte)
            if byte == 0xFF { data.append(0x00) }
            if index % 200 == 199 {
                data += [0xFF, 0xD0 + restart]
                restart = (restart + 1) % 8
            }
        }
        return data
    }

    public static let app0 = segment(0xE0, Bytes.ascii("JFIF") + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
    public static func exif(orientation: Int) -> [UInt8] {
        segment(0xE1, Bytes.ascii("Exif") + [0, 0] + ExifFixture.tiff(littleEndian: false, orientation: orientation))
    }
    public static let xmp = segment(0xE1, Bytes.ascii("http://ns.adobe.com/xap/1.0/") + [0] + ExifFixture.xmpPacket)
    public static let icc = segment(0xE2, Bytes.ascii("ICC_PROFILE") + [0, 1, 1] + Bytes.random(128, seed: 11))
    public static let mpf = segment(0xE2, Bytes.ascii("MPF") + [0, 0x4D, 0x4D, 0, 0x2A] + Bytes.random(40, seed: 12))
    public static let iptc = segment(0xED, Bytes.ascii("Photoshop 3.0") + [0] + Bytes.ascii("8BIM") + [4, 4, 0, 0]
        + Bytes.be32(10) + [0x1C, 2, 90] + Bytes.be16(5) + Bytes.ascii("Paris"))
    public static let comment = segment(0xFE, Bytes.ascii("taken at home"))
    public static let dqt = segment(0xDB, [0] + Bytes.random(64, seed: 13))
    public static let sof0 = segment(0xC0, [8] + Bytes.be16(480) + Bytes.be16(640) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
    public static let dht = segment(0xC4, [0, 0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0] + Array(0 ... 11))
    public static let sos = segment(0xDA, [3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 0x3F, 0])
    public static let firstScan = entropy(700, seed: 14)
    public static let secondScan = entropy(500, seed: 15)

    /// What the module must write in place of the Exif: big-endian TIFF, IFD0 with the orientation alone.
    public static func minimalExif(_ orientation: Int) -> [UInt8] {
        [0xFF, 0xE1, 0x00, 0x22] + Bytes.ascii("Exif") + [0, 0] + [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 1]
            + [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0] + [0, 0, 0, 0]
    }

    /// A second image after EOI, the way MPF files carry one (with its own Exif).
    public static let secondImage = [0xFF, 0xD8] + exif(orientation: 6) + dqt + sof0 + dht + sos + entropy(200, seed: 16)
        + [0xFF, 0xD9]

    public static func make(orientation: Int = 6, trailer: Bool = false) -> Fixture {
        let soi: [UInt8] = [0xFF, 0xD8]
        let eoi: [UInt8] = [0xFF, 0xD9]
        let image = dqt + sof0 + dht + sos + firstScan + dht + xmp + sos + secondScan + eoi
        let kept = dqt + sof0 + dht + sos + firstScan + dht + sos + secondScan + eoi
        let orientationKept = (2 ... 8).contains(orientation) ? minimalExif(orientation) : []
        let bytes = soi + app0 + exif(orientation: orientation) + xmp + icc + (trailer ? mpf : []) + iptc + comment
            + image + (trailer ? secondImage : [])
        let expected = soi + app0 + orientationKept + icc + kept
        let removed = ["EXIF", "XMP"] + (trailer ? ["MPF"] : []) + ["IPTC", "comment"]
            + (trailer ? ["trailing data"] : [])
        let name = "jpeg" + (orientation == 6 ? "" : " orientation \(orientation)") + (trailer ? " + MPF" : "")
        return Fixture(name: name, type: .jpeg, bytes: bytes, expected: expected, size: .init(width: 640, height: 480),
                       removed: removed)
    }
}
