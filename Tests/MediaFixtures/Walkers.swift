/// Test-side parsers that walk a sanitised output's structure, independently of the module.
public enum Walk {
    /// A JPEG's segments up to and including the first SOS (marker, payload); nil when the structure is broken.
    public static func jpegSegments(_ bytes: [UInt8]) -> [(marker: UInt8, payload: [UInt8])]? {
        guard bytes.starts(with: [0xFF, 0xD8]) else { return nil }
        var segments: [(marker: UInt8, payload: [UInt8])] = []
        var position = 2
        while position + 4 <= bytes.count, bytes[position] == 0xFF {
            let marker = bytes[position + 1]
            let length = Bytes.readBE(bytes, position + 2, 2)
            guard length >= 2, position + 2 + length <= bytes.count else { return nil }
            segments.append((marker, Array(bytes[position + 4 ..< position + 2 + length])))
            position += 2 + length
            if marker == 0xDA { return segments }
        }
        return nil
    }

    /// Every APPn and COM segment of a JPEG, before and between scans (markers found by walking the entropy data).
    public static func jpegMetadataMarkers(_ bytes: [UInt8]) -> [UInt8] {
        var markers: [UInt8] = []
        var position = 2
        while position + 1 < bytes.count {
            guard bytes[position] == 0xFF else {
                position += 1
                continue
            }
            let marker = bytes[position + 1]
            switch marker {
            case 0x00, 0xD0 ... 0xD7, 0xFF: position += 2
            case 0xD9: return markers
            default:
                if (0xE0 ... 0xEF).contains(marker) || marker == 0xFE { markers.append(marker) }
                guard position + 4 <= bytes.count else { return markers }
                position += 2 + Bytes.readBE(bytes, position + 2, 2)
            }
        }
        return markers
    }

    /// A PNG's chunks (type, data, whether the CRC is right).
    public static func pngChunks(_ bytes: [UInt8]) -> [(type: String, data: [UInt8], crcOK: Bool)]? {
        guard bytes.starts(with: PNGFixture.signature) else { return nil }
        var chunks: [(type: String, data: [UInt8], crcOK: Bool)] = []
        var position = 8
        while position < bytes.count {
            guard position + 12 <= bytes.count else { return nil }
            let length = Bytes.readBE(bytes, position, 4)
            guard position + 12 + length <= bytes.count else { return nil }
            let typed = Array(bytes[position + 4 ..< position + 8 + length])
            let crc = Bytes.readBE(bytes, position + 8 + length, 4)
            chunks.append((String(decoding: typed.prefix(4), as: UTF8.self), Array(typed.dropFirst(4)),
                           Int(Bytes.crc32(typed)) == crc))
            position += 12 + length
        }
        return chunks
    }

    /// A WebP's chunks (FourCC, payload) inside its RIFF container; nil when the RIFF size is off.
    public static func webpChunks(_ bytes: [UInt8]) -> [(fourCC: String, payload: [UInt8])]? {
        guard bytes.count >= 12, Bytes.readLE(bytes, 4, 4) + 8 == bytes.count else { return nil }
        var chunks: [(fourCC: String, payload: [UInt8])] = []
        var position = 12
        while position < bytes.count {
            guard position + 8 <= bytes.count else { return nil }
            let size = Bytes.readLE(bytes, position + 4, 4)
            guard position + 8 + size <= bytes.count else { return nil }
            chunks.append((String(decoding: bytes[position ..< position + 4], as: UTF8.self),
                           Array(bytes[position + 8 ..< position + 8 + size])))
            position += 8 + size + size % 2
        }
        return chunks
    }

    /// A GIF's blocks after the color table: extensions as "ext XX" (or "app IDENTIFIER"), images as "image", with
    /// the data of their sub-blocks joined; nil when the structure is broken.
    public static func gifBlocks(_ bytes: [UInt8]) -> [(kind: String, data: [UInt8])]? {
        guard bytes.count >= 13 else { return nil }
        var position = 13 + (bytes[10] & 0x80 != 0 ? 3 << (Int(bytes[10] & 7) + 1) : 0)
        var blocks: [(kind: String, data: [UInt8])] = []
        func subBlocks() -> [UInt8]? {
            var data: [UInt8] = []
            while position < bytes.count {
                let size = Int(bytes[position])
                position += 1
                if size == 0 { return data }
                guard position + size <= bytes.count else { return nil }
                data += bytes[position ..< position + size]
                position += size
            }
            return nil
        }
        while position < bytes.count {
            switch bytes[position] {
            case 0x21:
                guard position + 2 < bytes.count else { return nil }
                let label = bytes[position + 1]
                position += 2
                var kind = "ext " + String(label, radix: 16)
                if label == 0xFF, position + 12 <= bytes.count {
                    kind = "app " + String(decoding: bytes[position + 1 ..< position + 12], as: UTF8.self)
                }
                guard let data = subBlocks() else { return nil }
                blocks.append((kind, data))
            case 0x2C:
                guard position + 10 <= bytes.count else { return nil }
                let packed = bytes[position + 9]
                position += 10 + (packed & 0x80 != 0 ? 3 << (Int(packed & 7) + 1) : 0) + 1  // and the code size
                guard let data = subBlocks() else { return nil }
                blocks.append(("image", data))
            case 0x3B:
                return position == bytes.count - 1 ? blocks : nil
            default:
                return nil
            }
        }
        return nil
    }
}
