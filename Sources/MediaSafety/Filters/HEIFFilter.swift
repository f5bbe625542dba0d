/// HEIC and HEIF (ISO-BMFF): top-level box by box; nothing is removed and nothing moves, so every offset in the
/// file stays right. The `meta` box is gathered whole (up to 4 MiB) and read by `HEIFMeta`: the Exif and XMP items'
/// bytes are zero-filled where they lie, inside `idat` at once, in later boxes (`mdat`) as they stream past.
///
/// Refused as unsupported, because location would be stored: a metadata extent that lies before the `meta` box (a
/// `meta` after `mdat`), a `meta` larger than 4 MiB or open-ended, a `moov` box (image sequences carry track
/// metadata of their own).
struct HEIFFilter: MediaFilter {
    /// The largest `meta` box gathered.
    static let metaCap = 4 << 20

    private enum State {
        /// Gathering a box's size and type.
        case boxHeader
        /// Gathering a box's 64-bit size.
        case largeSize(type: FourCC)
        /// Gathering the `meta` box's payload.
        case meta
        case passing(remaining: Int)
        /// The last box, whose size 0 means "up to the end of the file".
        case passingToEnd
    }

    private var state = State.boxHeader
    private var gather = Gather()
    private var boxHeader: [UInt8] = []
    /// The file offset of the next byte written: the filter writes every byte it reads, in order.
    private var offset = 0
    private var boxes = 0
    private var metaSeen = false
    /// Where the items' data ends at the latest, by the `meta` box.
    private var dataEnd = 0
    private var blanks = BlankRanges()
    private(set) var dimensions: (width: Int, height: Int)?
    private var log = RemovalLog()

    init() { gather.start(8) }

    var removed: [String] { log.names }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        while true {
            switch state {
            case .boxHeader:
                guard gather.fill(from: &input) else { return }
                let header = gather.bytes
                let size = header.bigEndian(at: 0, count: 4)
                let type = FourCC(header, at: 4)
                boxes += 1
                guard boxes > 1 || type == FourCC("ftyp") else {
                    throw .malformed("the HEIF does not start with an ftyp box")
                }
                boxHeader = header
                if size == 1 {
                    gather.start(8)
                    state = .largeSize(type: type)
                } else {
                    try box(type, size: size == 0 ? nil : size, into: &output)
                }
            case .largeSize(let type):
                guard gather.fill(from: &input) else { return }
                boxHeader += gather.bytes
                let size = UInt64(gather.bytes.bigEndian(at: 0, count: 4)) << 32
                    | UInt64(gather.bytes.bigEndian(at: 4, count: 4))
                guard size <= UInt64(Int.max) else {
                    throw .malformed("the HEIF has a \(type) box whose 64-bit size \(size) is out of range")
                }
                try box(type, size: Int(size), into: &output)
            case .meta:
                guard gather.fill(from: &input) else { return }
                try meta(into: &output)
            case .passing(let remaining):
                if remaining == 0 {
                    nextBox()
                    continue
                }
                guard !input.isEmpty else { return }
                let part = input.take(upTo: remaining)
                write(part, into: &output)
                state = .passing(remaining: remaining - part.count)
            case .passingToEnd:
                guard !input.isEmpty else { return }
                write(input.take(upTo: input.remaining), into: &output)
                return
            }
        }
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        switch state {
        case .passingToEnd: break
        case .boxHeader where gather.isEmpty: break
        default: throw .malformed("the HEIF ends inside a box")
        }
        guard metaSeen else { throw .malformed("the HEIF has no meta box") }
        guard offset >= dataEnd else { throw .malformed("the HEIF ends before the data its items point to") }
    }

    private mutating func nextBox() {
        gather.start(8)
        state = .boxHeader
    }

    /// A top-level box whose header (in `boxHeader`) is read; `size` nil when it runs to the end of the file.
    private mutating func box(_ type: FourCC, size: Int?, into output: inout [UInt8]) throws(MediaError) {
        if let size, size < boxHeader.count {
            throw .malformed("the HEIF has a \(type) box whose size \(size) is smaller than its header")
        }
        switch type {
        case FourCC("meta"):
            guard let size else { throw .unsupported("the HEIF's meta box runs to the end of the file") }
            let payload = size - boxHeader.count
            guard payload <= Self.metaCap else {
                throw .unsupported("the HEIF's meta box is \(size) bytes, more than the \(Self.metaCap) accepted")
            }
            gather.start(payload)
            state = .meta
        case FourCC("moov"):
            throw .unsupported("the HEIF holds an image sequence (a moov box), whose track metadata is not cleaned")
        default:
            write(boxHeader, into: &output)
            if let size { state = .passing(remaining: size - boxHeader.count) } else { state = .passingToEnd }
        }
    }

    /// The `meta` box is gathered: blanks its Exif and XMP items, then writes it.
    private mutating func meta(into output: inout [UInt8]) throws(MediaError) {
        var payload = gather.bytes
        let findings = try HEIFMeta.inspect(&payload)
        if findings.fileRanges.contains(where: { $0.lowerBound < offset }) {
            throw .unsupported("the HEIF stores Exif or XMP metadata before its meta box (metadata after media "
                + "data), which cannot be removed while streaming")
        }
        blanks.add(findings.fileRanges)
        for name in findings.removed { log.note(name) }
        if dimensions == nil { dimensions = findings.dimensions }
        dataEnd = max(dataEnd, findings.dataEnd)
        metaSeen = true
        write(boxHeader, into: &output)
        write(payload, into: &output)
        nextBox()
    }

    /// Writes the next bytes of the file, zero-filling those inside a metadata extent.
    private mutating func write(_ bytes: some Collection<UInt8>, into output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: bytes)
        blanks.apply(to: &output, from: start, fileOffset: offset)
        offset += bytes.count
    }
}

/// File ranges to zero-fill as the file streams past: sorted, disjoint, those wholly passed skipped.
struct BlankRanges: Sendable {
    private var ranges: [Range<Int>] = []
    /// The first range not wholly passed.
    private var next = 0

    /// Adds `new` ranges to the ones still ahead.
    mutating func add(_ new: [Range<Int>]) {
        guard !new.isEmpty else { return }
        ranges = Self.merged(Array(ranges[next...]) + new)
        next = 0
    }

    /// `ranges` sorted, the overlapping and adjacent ones joined, the empty ones left out.
    static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var merged: [Range<Int>] = []
        for range in ranges.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound ..< max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// Zeroes `output[start...]`, which holds the file's bytes from `fileOffset` on, where it meets a range.
    mutating func apply(to output: inout [UInt8], from start: Int, fileOffset: Int) {
        let end = fileOffset + (output.count - start)
        while next < ranges.count, ranges[next].upperBound <= fileOffset { next += 1 }
        var index = next
        while index < ranges.count, ranges[index].lowerBound < end {
            let lower = max(ranges[index].lowerBound, fileOffset)
            let upper = min(ranges[index].upperBound, end)
            for position in lower ..< upper { output[start + (position - fileOffset)] = 0 }
            index += 1
        }
    }
}
