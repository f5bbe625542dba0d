/// The one Exif field a JPEG keeps: its orientation, read from the dropped Exif and written into a minimal one.
enum JPEGExif {
    /// The Orientation (IFD0 tag 0x0112, one SHORT) of an APP1 Exif payload ("Exif\0\0" and a TIFF structure), nil
    /// when absent or unreadable. Every offset is checked against the payload.
    static func orientation(inSegment payload: [UInt8]) -> Int? {
        let tiff = 6
        guard payload.count >= tiff + 8 else { return nil }
        let littleEndian: Bool
        switch (payload[tiff], payload[tiff + 1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        var header = ByteReader(payload, from: tiff + 2, littleEndian: littleEndian)
        guard header.u16() == 42, let ifd = header.u32(), Int(ifd) <= payload.count - tiff else { return nil }
        var entries = ByteReader(payload, from: tiff + Int(ifd), littleEndian: littleEndian)
        guard let count = entries.u16() else { return nil }
        for _ in 0 ..< count {
            guard let tag = entries.u16(), let type = entries.u16(), let values = entries.u32(),
                  let value = entries.u16(), entries.skip(2) else { return nil }
            if tag == 0x0112 { return type == 3 && values == 1 ? Int(value) : nil }
        }
        return nil
    }

    /// A whole APP1 segment (36 bytes) holding an Exif whose IFD0 has the orientation alone: big-endian TIFF,
    /// one entry, no next IFD, no GPS or Exif sub-IFD.
    static func orientationSegment(_ orientation: Int) -> [UInt8] {
        let segment: [UInt8] = [0xFF, 0xE1, 0x00, 0x22]
        let exif: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]  // "Exif\0\0"
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08]  // big-endian, IFD0 at 8
        let ifd: [UInt8] = [0x00, 0x01,  // one entry
                            0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01,  // Orientation, SHORT, count 1
                            0x00, UInt8(truncatingIfNeeded: orientation), 0x00, 0x00,
                            0x00, 0x00, 0x00, 0x00]  // no next IFD
        return segment + exif + tiff + ifd
    }
}
