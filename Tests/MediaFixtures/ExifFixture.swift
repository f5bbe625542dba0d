/// An Exif TIFF structure the way a phone writes one: IFD0 with Make, Orientation and a GPS IFD pointer, and a GPS
/// IFD with latitude and longitude (rationals stored out of line).
public enum ExifFixture {
    /// The latitude rationals 48/1, 51/1, 2417/100 in the byte order of the TIFF: absent from any clean output.
    public static func latitude(littleEndian: Bool) -> [UInt8] {
        let u32 = { (value: Int) -> [UInt8] in littleEndian ? Bytes.le32(value) : Bytes.be32(value) }
        return u32(48) + u32(1) + u32(51) + u32(1) + u32(2417) + u32(100)
    }

    /// The TIFF structure (no "Exif\0\0" header).
    public static func tiff(littleEndian: Bool, orientation: Int = 6) -> [UInt8] {
        let u16 = { (value: Int) -> [UInt8] in littleEndian ? Bytes.le16(value) : Bytes.be16(value) }
        let u32 = { (value: Int) -> [UInt8] in littleEndian ? Bytes.le32(value) : Bytes.be32(value) }
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        // Layout: header 8, IFD0 at 8 (2 + 3 * 12 + 4 = 42) -> 50, Make "Phone\0" -> 56, GPS IFD (2 + 4 * 12 + 4 = 54)
        // -> 110, latitude (24) -> 134, longitude (24) -> 158.
        var tiff: [UInt8] = (littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]) + u16(42) + u32(8)
        tiff += u16(3)
        tiff += entry(0x010F, 2, 6, u32(50))
        tiff += entry(0x0112, 3, 1, u16(orientation))
        tiff += entry(0x8825, 4, 1, u32(56))
        tiff += u32(0)
        tiff += Bytes.ascii("Phone") + [0]
        tiff += u16(4)
        tiff += entry(0x0001, 2, 2, Bytes.ascii("N") + [0])
        tiff += entry(0x0002, 5, 3, u32(110))
        tiff += entry(0x0003, 2, 2, Bytes.ascii("E") + [0])
        tiff += entry(0x0004, 5, 3, u32(134))
        tiff += u32(0)
        tiff += latitude(littleEndian: littleEndian)
        tiff += u32(2) + u32(1) + u32(17) + u32(1) + u32(4012) + u32(100)
        precondition(tiff.count == 158)
        return tiff
    }

    /// An XMP packet with a location in it.
    public static let xmpPacket = Bytes.ascii(
        "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\">"
            + "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
            + "xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" exif:GPSLatitude=\"48,51.4028N\" "
            + "exif:GPSLongitude=\"2,17.6687E\"/></rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>")
}
