/// HEICs the way an iPhone lays them out: ftyp, meta (hdlr, pitm, iinf, iloc, iprp with ipco/ispe and ipma), mdat
/// with the HEVC item, an Exif item (with a GPS IFD) and an XMP item.
public enum HEIFFixture {
    public enum Layout {
        /// ftyp, meta, mdat: every item in mdat (construction method 0).
        case exifInMdat
        /// ftyp, meta, mdat: the Exif item in meta's idat (construction method 1), the others in mdat.
        case exifInIdat
        /// ftyp, mdat, meta: what a streaming sanitiser must refuse.
        case metaAfterMdat
    }

    public static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        Bytes.be32(8 + payload.count) + Bytes.ascii(type) + payload
    }

    public static func fullBox(_ type: String, version: UInt8, flags: Int = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version] + Bytes.be24(flags) + payload)
    }

    public static let ftyp = box("ftyp", Bytes.ascii("heic") + Bytes.be32(0) + Bytes.ascii("mif1") + Bytes.ascii("heic"))
    public static let hevc = Bytes.random(900, seed: 51)
    public static let exifItem = Bytes.be32(6) + Bytes.ascii("Exif") + [0, 0] + ExifFixture.tiff(littleEndian: false)
    public static let xmpItem = ExifFixture.xmpPacket

    public static let hdlr = fullBox("hdlr", version: 0,
                              Bytes.be32(0) + Bytes.ascii("pict") + [UInt8](repeating: 0, count: 13))
    public static let pitm = fullBox("pitm", version: 0, Bytes.be16(1))
    /// Items 1 (hvc1, the primary), 2 (Exif), 3 (XMP, a `mime` item).
    public static let iinf = fullBox("iinf", version: 0, Bytes.be16(3)
        + fullBox("infe", version: 2, Bytes.be16(1) + Bytes.be16(0) + Bytes.ascii("hvc1Image") + [0])
        + fullBox("infe", version: 2, Bytes.be16(2) + Bytes.be16(0) + Bytes.ascii("ExifExif") + [0])
        + fullBox("infe", version: 2, Bytes.be16(3) + Bytes.be16(0) + Bytes.ascii("mimeXMP") + [0]
            + Bytes.ascii("application/rdf+xml") + [0]))
    /// A larger ispe that belongs to no item: the primary item's own must win.
    public static let iprp = box("iprp", box("ipco", box("hvcC", Bytes.random(23, seed: 52))
        + fullBox("ispe", version: 0, Bytes.be32(4032) + Bytes.be32(3024))
        + fullBox("ispe", version: 0, Bytes.be32(8000) + Bytes.be32(8000)))
        + fullBox("ipma", version: 0, Bytes.be32(1) + Bytes.be16(1) + [2, 0x81, 0x02]))

    /// One iloc version 1 item with one extent (4-byte offset and length, no base offset).
    public static func item(_ id: Int, method: Int = 0, offset: Int, length: Int) -> [UInt8] {
        Bytes.be16(id) + Bytes.be16(method) + Bytes.be16(0) + Bytes.be16(1) + Bytes.be32(offset) + Bytes.be32(length)
    }

    public static func iloc(_ items: [[UInt8]]) -> [UInt8] {
        fullBox("iloc", version: 1, [0x44, 0x00] + Bytes.be16(items.count) + items.joined())
    }

    /// The three items at their offsets in the file (or, for the Exif, in idat).
    public static func meta(hevcAt hevcOffset: Int, exifAt exifOffset: Int, xmpAt xmpOffset: Int,
                     exifInIdat: Bool) -> [UInt8] {
        let iloc = iloc([item(1, offset: hevcOffset, length: hevc.count),
                         item(2, method: exifInIdat ? 1 : 0, offset: exifOffset, length: exifItem.count),
                         item(3, offset: xmpOffset, length: xmpItem.count)])
        let idat = exifInIdat ? box("idat", exifItem) : []
        return fullBox("meta", version: 0, hdlr + pitm + iinf + iloc + iprp + idat)
    }

    /// ftyp, a meta with `iloc` in place of the usual one, and an mdat holding the HEVC item then the Exif item.
    public static func file(iloc: [UInt8]) -> [UInt8] {
        ftyp + fullBox("meta", version: 0, hdlr + pitm + iinf + iloc + iprp) + box("mdat", hevc + exifItem)
    }

    /// The file, and where its Exif and XMP bytes lie in it.
    public static func build(_ layout: Layout) -> (bytes: [UInt8], blanks: [Range<Int>], hevc: Range<Int>) {
        let draft = meta(hevcAt: 0, exifAt: 0, xmpAt: 0, exifInIdat: layout == .exifInIdat)
        let mdatPayload = layout == .exifInIdat ? hevc + xmpItem : hevc + exifItem + xmpItem
        let mdatStart = layout == .metaAfterMdat ? ftyp.count : ftyp.count + draft.count
        let hevcAt = mdatStart + 8
        let exifAt = layout == .exifInIdat ? 0 : hevcAt + hevc.count
        let xmpAt = hevcAt + hevc.count + (layout == .exifInIdat ? 0 : exifItem.count)
        let metaBox = meta(hevcAt: hevcAt, exifAt: exifAt, xmpAt: xmpAt, exifInIdat: layout == .exifInIdat)
        let mdat = box("mdat", mdatPayload)
        let bytes = layout == .metaAfterMdat ? ftyp + mdat + metaBox : ftyp + metaBox + mdat
        let exifRange = layout == .exifInIdat
            ? (ftyp.count + metaBox.count - exifItem.count) ..< (ftyp.count + metaBox.count)
            : exifAt ..< exifAt + exifItem.count
        return (bytes, [exifRange, xmpAt ..< xmpAt + xmpItem.count], hevcAt ..< hevcAt + hevc.count)
    }

    public static func make(_ layout: Layout) -> Fixture {
        let (bytes, blanks, _) = build(layout)
        var expected = bytes
        for range in blanks { for index in range { expected[index] = 0 } }
        return Fixture(name: layout == .exifInIdat ? "heic (Exif in idat)" : "heic", type: .heic, bytes: bytes,
                       expected: expected, size: .init(width: 4032, height: 3024), removed: ["EXIF", "XMP"])
    }
}
