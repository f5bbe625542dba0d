/// PNG: chunk by chunk. IHDR must come first (its CRC is checked; it gives the dimensions); `eXIf`, `tEXt`,
/// `zTXt`, `iTXt` (where XMP lives) and `tIME` are dropped whole; every other chunk, IDAT, APNG's and unknown ones
/// included, is copied unchanged as it streams, CRC and all. Bytes after IEND are dropped.
struct PNGFilter: MediaFilter {
    private enum State {
        case signature
        /// Gathering a chunk's length and type.
        case chunkHeader
        /// Gathering IHDR's 13 bytes and its CRC.
        case imageHeader
        /// Gathering the first bytes of an `iTXt` to tell XMP from other text; `rest` follows, CRC included.
        case textKeyword(rest: Int)
        case passing(remaining: Int)
        case dropping(remaining: Int)
        /// After IEND.
        case trailing
    }

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let xmpKeyword: [UInt8] = Array("XML:com.adobe.xmp\0".utf8)

    private var state = State.signature
    private var gather = Gather()
    private var chunkHeader: [UInt8] = []
    private var chunks = 0
    private var ended = false
    private(set) var dimensions: (width: Int, height: Int)?
    private var log = RemovalLog()

    init() { gather.start(8) }

    var removed: [String] { log.names }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        while true {
            switch state {
            case .signature:
                guard gather.fill(from: &input) else { return }
                guard gather.bytes == Self.signature else {
                    throw .malformed("the PNG does not start with its signature")
                }
                output += gather.bytes
                nextChunk()
            case .chunkHeader:
                guard gather.fill(from: &input) else { return }
                try chunk(header: gather.bytes, into: &output)
            case .imageHeader:
                guard gather.fill(from: &input) else { return }
                try imageHeader(gather.bytes, into: &output)
            case .textKeyword(let rest):
                guard gather.fill(from: &input) else { return }
                log.note(gather.bytes == Self.xmpKeyword ? "XMP" : "text chunks")
                state = .dropping(remaining: rest)
            case .passing(let remaining):
                if remaining == 0 {
                    if ended { state = .trailing } else { nextChunk() }
                    continue
                }
                guard !input.isEmpty else { return }
                let part = input.take(upTo: remaining)
                output.append(contentsOf: part)
                state = .passing(remaining: remaining - part.count)
            case .dropping(let remaining):
                if remaining == 0 {
                    nextChunk()
                    continue
                }
                guard !input.isEmpty else { return }
                state = .dropping(remaining: remaining - input.take(upTo: remaining).count)
            case .trailing:
                log.dropTrailing(&input)
                return
            }
        }
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        guard case .trailing = state else { throw .malformed("the PNG ends before its IEND chunk") }
    }

    private mutating func nextChunk() {
        gather.start(8)
        state = .chunkHeader
    }

    private mutating func chunk(header: [UInt8], into output: inout [UInt8]) throws(MediaError) {
        let length = header.bigEndian(at: 0, count: 4)
        let type = FourCC(header, at: 4)
        guard length <= 0x7FFF_FFFF else {
            throw .malformed("the PNG has a chunk (\(type)) whose length \(length) exceeds 2^31-1")
        }
        guard header[4 ..< 8].allSatisfy({ (0x41 ... 0x5A).contains($0) || (0x61 ... 0x7A).contains($0) }) else {
            throw .malformed("the PNG has a chunk type (\(type)) that is not four letters")
        }
        chunks += 1
        if chunks == 1 {
            guard type == FourCC("IHDR"), length == 13 else {
                throw .malformed("the PNG does not begin with a 13-byte IHDR chunk")
            }
            chunkHeader = header
            gather.start(13 + 4)
            state = .imageHeader
            return
        }
        let withCRC = length + 4
        switch type {
        case FourCC("IHDR"):
            throw .malformed("the PNG has a second IHDR chunk")
        case FourCC("eXIf"):
            log.note("EXIF")
            state = .dropping(remaining: withCRC)
        case FourCC("tEXt"), FourCC("zTXt"):
            log.note("text chunks")
            state = .dropping(remaining: withCRC)
        case FourCC("iTXt"):
            let keyword = min(length, Self.xmpKeyword.count)
            gather.start(keyword)
            state = .textKeyword(rest: withCRC - keyword)
        case FourCC("tIME"):
            log.note("timestamp")
            state = .dropping(remaining: withCRC)
        case FourCC("IEND"):
            guard length == 0 else { throw .malformed("the PNG's IEND chunk is not empty") }
            ended = true
            output += header
            state = .passing(remaining: withCRC)
        default:
            output += header
            state = .passing(remaining: withCRC)
        }
    }

    /// IHDR's 13 bytes and CRC, gathered.
    private mutating func imageHeader(_ bytes: [UInt8], into output: inout [UInt8]) throws(MediaError) {
        let crc = UInt32(bytes.bigEndian(at: 13, count: 4))
        guard CRC32.checksum(chunkHeader[4 ..< 8] + bytes[0 ..< 13]) == crc else {
            throw .malformed("the PNG's IHDR chunk fails its CRC")
        }
        let width = bytes.bigEndian(at: 0, count: 4)
        let height = bytes.bigEndian(at: 4, count: 4)
        guard (1 ... 0x7FFF_FFFF).contains(width), (1 ... 0x7FFF_FFFF).contains(height) else {
            throw .malformed("the PNG's IHDR gives a size of \(width)×\(height)")
        }
        dimensions = (width, height)
        output += chunkHeader
        output += bytes
        nextChunk()
    }
}
