/// Reads a HEIF `meta` box's payload: which items carry Exif or XMP and where their bytes are (`iinf`, `iloc`,
/// `idat`), and the primary image's size (`pitm`, `iprp`: `ipco`'s `ispe` through `ipma`).
///
/// Every size and offset is checked against the gathered bytes; a structure that does not fit throws.
enum HEIFMeta {
    /// What the `meta` box says.
    struct Findings {
        /// The absolute file ranges of Exif and XMP items stored in the file (construction method 0).
        var fileRanges: [Range<Int>] = []
        /// Where the file's other items end at the latest: a file that stops before is truncated.
        var dataEnd = 0
        var dimensions: (width: Int, height: Int)?
        var removed: [String] = []
    }

    /// One extent of an item, as `iloc` gives it (the base offset added).
    struct Extent {
        let item: UInt32
        let method: Int
        let dataReference: Int
        let start: UInt64
        let length: UInt64
    }

    /// A box inside the gathered payload: its type and its content's range (after the header).
    struct Box {
        let type: FourCC
        let content: Range<Int>
    }

    private enum Kind {
        case exif, xmp

        var name: String { self == .exif ? "EXIF" : "XMP" }
    }

    /// Reads `payload` (the `meta` box's): zero-fills the Exif and XMP items stored in its `idat` (construction
    /// method 1) and returns the file ranges of those stored elsewhere.
    static func inspect(_ payload: inout [UInt8]) throws(MediaError) -> Findings {
        guard payload.count >= 4 else { throw .malformed("the HEIF's meta box is too short for its version") }
        let children = try boxes(in: payload, within: 4 ..< payload.count)
        func first(_ type: FourCC) -> Box? { children.first { $0.type == type } }

        var findings = Findings()
        let primary = first(FourCC("pitm")).flatMap { primaryItem(payload, $0) }
        let kinds = try first(FourCC("iinf")).map { box throws(MediaError) in try locationItems(payload, box) } ?? [:]
        if let iloc = first(FourCC("iloc")) {
            let idat = first(FourCC("idat"))?.content
            var found: Set<String> = []
            var inIdat: [Range<Int>] = []
            try extents(payload, iloc) { extent throws(MediaError) in
                let (end, overflow) = extent.start.addingReportingOverflow(extent.length)
                guard !overflow, end <= UInt64(Int.max / 2) else {
                    throw .malformed("the HEIF's iloc box has an extent out of range")
                }
                guard let kind = kinds[extent.item] else {
                    if extent.method == 0, extent.dataReference == 0 {
                        findings.dataEnd = max(findings.dataEnd, Int(end))
                    }
                    return
                }
                guard extent.length > 0 else {
                    throw .unsupported("the HEIF's \(kind.name) item has an extent of unspecified length")
                }
                switch extent.method {
                case 0:
                    // The data reference is taken to be this file whatever its index: zeroing is the safe side.
                    findings.fileRanges.append(Int(extent.start) ..< Int(end))
                case 1:
                    guard let idat, end <= UInt64(idat.count) else {
                        throw .malformed("the HEIF's \(kind.name) item has an extent outside its idat box")
                    }
                    inIdat.append((idat.lowerBound + Int(extent.start)) ..< (idat.lowerBound + Int(end)))
                default:
                    throw .unsupported("the HEIF's \(kind.name) item is built from another item (construction method "
                        + "\(extent.method))")
                }
                if found.insert(kind.name).inserted { findings.removed.append(kind.name) }
            }
            // Merged first: extents may overlap many times over, each byte is zeroed once.
            for range in BlankRanges.merged(inIdat) {
                for index in range { payload[index] = 0 }
            }
        }
        findings.dimensions = first(FourCC("iprp")).flatMap { try? imageSize(payload, $0, primary: primary) }
        return findings
    }

    /// The boxes laid end to end in `range` of `bytes` (size 0: up to the range's end; size 1: a 64-bit size).
    static func boxes(in bytes: [UInt8], within range: Range<Int>) throws(MediaError) -> [Box] {
        var list: [Box] = []
        var position = range.lowerBound
        while position < range.upperBound {
            var reader = ByteReader(bytes, from: position, to: range.upperBound)
            guard let size32 = reader.u32(), let type = reader.fourCC() else {
                throw .malformed("the HEIF's meta box has a box header cut short")
            }
            let available = UInt64(range.upperBound - position)
            var size = UInt64(size32)
            if size32 == 1 {
                guard let large = reader.u64() else {
                    throw .malformed("the HEIF's meta box has a box header cut short")
                }
                size = large
            } else if size32 == 0 {
                size = available
            }
            let header = reader.position - position
            guard size >= UInt64(header), size <= available else {
                throw .malformed("the HEIF has a \(type) box of \(size) bytes that does not fit in its parent")
            }
            list.append(Box(type: type, content: reader.position ..< position + Int(size)))
            position += Int(size)
        }
        return list
    }

    /// `pitm`'s item ID.
    private static func primaryItem(_ bytes: [UInt8], _ box: Box) -> UInt32? {
        var reader = ByteReader(bytes, from: box.content.lowerBound, to: box.content.upperBound)
        guard let version = reader.u8(), reader.skip(3) else { return nil }
        return version == 0 ? reader.u16().map(UInt32.init) : reader.u32()
    }

    /// The IDs of the items `iinf` declares as Exif (`Exif`) or XMP (`mime` with an XMP or RDF content type).
    private static func locationItems(_ bytes: [UInt8], _ box: Box) throws(MediaError) -> [UInt32: Kind] {
        var reader = ByteReader(bytes, from: box.content.lowerBound, to: box.content.upperBound)
        guard let version = reader.u8(), reader.skip(3), reader.skip(version == 0 ? 2 : 4) else {
            throw .malformed("the HEIF's iinf box is cut short")
        }
        var kinds: [UInt32: Kind] = [:]
        for entry in try boxes(in: bytes, within: reader.position ..< box.content.upperBound)
        where entry.type == FourCC("infe") {
            if let (id, kind) = try itemInfo(bytes, entry) { kinds[id] = kind }
        }
        return kinds
    }

    /// An `infe` entry's item ID and kind when it is Exif or XMP.
    private static func itemInfo(_ bytes: [UInt8], _ box: Box) throws(MediaError) -> (UInt32, Kind)? {
        var reader = ByteReader(bytes, from: box.content.lowerBound, to: box.content.upperBound)
        guard let version = reader.u8(), reader.skip(3) else { throw .malformed("the HEIF has an infe box cut short") }
        let contentType: ArraySlice<UInt8>
        let id: UInt32
        switch version {
        case 0, 1:
            guard let item = reader.u16(), reader.skip(2) else {
                throw .malformed("the HEIF has an infe box cut short")
            }
            id = UInt32(item)
            _ = reader.cString()  // item_name
            contentType = reader.cString()
        case 2, 3:
            guard let item = version == 2 ? reader.u16().map(UInt32.init) : reader.u32(), reader.skip(2),
                  let type = reader.fourCC() else { throw .malformed("the HEIF has an infe box cut short") }
            id = item
            if type == FourCC("Exif") { return (id, .exif) }
            guard type == FourCC("mime") else { return nil }
            _ = reader.cString()  // item_name
            contentType = reader.cString()
        default:
            return nil  // a version no reader understands: its item is not read either
        }
        let lowered = contentType.map { (0x41 ... 0x5A).contains($0) ? $0 + 0x20 : $0 }
        let xmp = lowered.contains(subsequence: Array("xmp".utf8))
            || lowered.contains(subsequence: Array("rdf+xml".utf8))
        return xmp ? (id, .xmp) : nil
    }

    /// Calls `visit` with each extent `iloc` lists.
    private static func extents(_ bytes: [UInt8], _ box: Box,
                                visit: (Extent) throws(MediaError) -> Void) throws(MediaError) {
        let short = MediaError.malformed("the HEIF's iloc box is cut short")
        var reader = ByteReader(bytes, from: box.content.lowerBound, to: box.content.upperBound)
        guard let version = reader.u8(), reader.skip(3), let sizes = reader.u8(), let moreSizes = reader.u8() else {
            throw short
        }
        guard version <= 2 else { throw .unsupported("the HEIF's iloc box has version \(version)") }
        let offsetSize = Int(sizes >> 4)
        let lengthSize = Int(sizes & 0xF)
        let baseOffsetSize = Int(moreSizes >> 4)
        let indexSize = version >= 1 ? Int(moreSizes & 0xF) : 0
        guard [offsetSize, lengthSize, baseOffsetSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }) else {
            throw .malformed("the HEIF's iloc box has a field size other than 0, 4 or 8")
        }
        let extentSize = indexSize + offsetSize + lengthSize
        guard let itemCount = version < 2 ? reader.u16().map(UInt32.init) : reader.u32() else { throw short }
        for _ in 0 ..< itemCount {
            guard let item = version < 2 ? reader.u16().map(UInt32.init) : reader.u32() else { throw short }
            var method = 0
            if version >= 1 {
                guard let field = reader.u16() else { throw short }
                method = Int(field & 0xF)
            }
            guard let dataReference = reader.u16(), let base = reader.uint(baseOffsetSize),
                  let extentCount = reader.u16() else { throw short }
            if extentSize == 0 {
                // Extents without a single byte: one extent of the whole, unknown length (nothing more to read).
                if extentCount > 0 {
                    try visit(Extent(item: item, method: method, dataReference: Int(dataReference), start: base,
                                     length: 0))
                }
                continue
            }
            guard Int(extentCount) * extentSize <= reader.remaining else { throw short }
            for _ in 0 ..< extentCount {
                guard reader.skip(indexSize), let offset = reader.uint(offsetSize),
                      let length = reader.uint(lengthSize) else { throw short }
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow else { throw .malformed("the HEIF's iloc box has an extent offset out of range") }
                try visit(Extent(item: item, method: method, dataReference: Int(dataReference), start: start,
                                 length: length))
            }
        }
    }

    /// The primary item's `ispe` (through `ipma`), else the largest `ispe` in `ipco`.
    private static func imageSize(_ bytes: [UInt8], _ iprp: Box, primary: UInt32?) throws(MediaError)
        -> (width: Int, height: Int)? {
        let children = try boxes(in: bytes, within: iprp.content)
        guard let ipco = children.first(where: { $0.type == FourCC("ipco") }) else { return nil }
        let properties = try boxes(in: bytes, within: ipco.content)
        if let primary {
            for ipma in children where ipma.type == FourCC("ipma") {
                for index in associations(bytes, ipma, of: primary) where index >= 1 && index <= properties.count {
                    let property = properties[index - 1]
                    if property.type == FourCC("ispe"), let size = spatialExtent(bytes, property) { return size }
                }
            }
        }
        return properties.filter { $0.type == FourCC("ispe") }.compactMap { spatialExtent(bytes, $0) }
            .max { $0.width * $0.height < $1.width * $1.height }
    }

    /// The 1-based property indices `ipma` associates with `item` (empty when it is cut short).
    private static func associations(_ bytes: [UInt8], _ box: Box, of item: UInt32) -> [Int] {
        var reader = ByteReader(bytes, from: box.content.lowerBound, to: box.content.upperBound)
        guard let version = reader.u8(), let flags = reader.uint(3), let count = reader.u32() else { return [] }
        for _ in 0 ..< count {
            guard let id = version < 1 ? reader.u16().map(UInt32.init) : reader.u32(), let associated = reader.u8()
            else { return [] }
            var indices: [Int] = []
            for _ in 0 ..< associated {
                if flags & 1 == 1 {
                    guard let value = reader.u16() else { return [] }
                    indices.append(Int(value & 0x7FFF))
                } else {
                    guard let value = reader.u8() else { return [] }
                    indices.append(Int(value & 0x7F))
                }
            }
            if id == item { return indices }
        }
        return []
    }

    /// An `ispe` property's width and height (nil when cut short or zero).
    private static func spatialExtent(_ bytes: [UInt8], _ box: Box) -> (width: Int, height: Int)? {
        var reader = ByteReader(bytes, from: box.content.lowerBound, to: box.content.upperBound)
        guard reader.skip(4), let width = reader.u32(), let height = reader.u32(), width > 0, height > 0 else {
            return nil
        }
        return (Int(width), Int(height))
    }
}

extension Array where Element: Equatable {
    /// Whether `subsequence` occurs somewhere in the array.
    func contains(subsequence: [Element]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0 ... count - subsequence.count).contains {
            self[$0 ..< $0 + subsequence.count].elementsEqual(subsequence)
        }
    }
}
