/// WebP: the RIFF header, then chunk by chunk, never past the end the RIFF size declares (bytes after it are
/// dropped). The RIFF size is written first, so nothing may be removed: an `EXIF` or `XMP ` chunk is overwritten in
/// place by a `JUNK` chunk of the same size, zero-filled (WebP readers skip chunks they do not know; `JUNK` is RIFF's
/// usual name for padding). VP8X's EXIF (0x08) and XMP (0x04) flags are cleared. Every other chunk streams through
/// unchanged. The dimensions come from VP8X's canvas, else from the VP8 or VP8L bitstream header.
struct WebPFilter: MediaFilter {
    private enum State {
        /// Gathering "RIFF", the size and "WEBP".
        case header
        /// Gathering a chunk's type and size.
        case chunkHeader
        /// Gathering VP8X's 10 bytes; `pad` follows.
        case extendedHeader(pad: Int)
        /// Gathering the first 10 bytes of a VP8 bitstream; `rest` follows.
        case lossyHeader(rest: Int)
        /// Gathering the first 5 bytes of a VP8L bitstream; `rest` follows.
        case losslessHeader(rest: Int)
        case passing(remaining: Int)
        /// Writing zeros for a dropped chunk's payload, byte for byte.
        case blanking(remaining: Int)
        /// Past the RIFF container's end.
        case trailing
    }

    private var state = State.header
    private var gather = Gather()
    private var riffEnd = 0
    /// Where the next chunk starts, in the file.
    private var chunkStart = 12
    private var canvas: (width: Int, height: Int)?
    private var bitstream: (width: Int, height: Int)?
    /// Whether a VP8, VP8L or ANMF chunk came: a WebP without one has no image.
    private var hasImage = false
    private var log = RemovalLog()

    init() { gather.start(12) }

    var dimensions: (width: Int, height: Int)? { canvas ?? bitstream }
    var removed: [String] { log.names }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        while true {
            switch state {
            case .header:
                guard gather.fill(from: &input) else { return }
                let header = gather.bytes
                guard header.starts(withASCII: "RIFF"), FourCC(header, at: 8) == FourCC("WEBP") else {
                    throw .malformed("the WebP does not start with a RIFF header of form WEBP")
                }
                let size = header.littleEndian(at: 4, count: 4)
                guard size >= 4 else { throw .malformed("the WebP's RIFF size \(size) is too small to hold its form") }
                riffEnd = 8 + size
                output += header
                try nextChunk()
            case .chunkHeader:
                guard gather.fill(from: &input) else { return }
                try chunk(header: gather.bytes, into: &output)
            case .extendedHeader(let pad):
                guard gather.fill(from: &input) else { return }
                var payload = gather.bytes
                payload[0] &= ~0x0C  // no EXIF, no XMP: none is left
                canvas = (1 + payload.littleEndian(at: 4, count: 3), 1 + payload.littleEndian(at: 7, count: 3))
                output += payload
                state = .passing(remaining: pad)
            case .lossyHeader(let rest):
                guard gather.fill(from: &input) else { return }
                let frame = gather.bytes
                guard frame[0] & 1 == 0, frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A else {
                    throw .malformed("the WebP's VP8 chunk does not start with a key frame header")
                }
                let width = frame.littleEndian(at: 6, count: 2) & 0x3FFF
                let height = frame.littleEndian(at: 8, count: 2) & 0x3FFF
                guard width > 0, height > 0 else { throw .malformed("the WebP's VP8 frame has a size of 0") }
                if bitstream == nil { bitstream = (width, height) }
                output += frame
                state = .passing(remaining: rest)
            case .losslessHeader(let rest):
                guard gather.fill(from: &input) else { return }
                let header = gather.bytes
                guard header[0] == 0x2F else { throw .malformed("the WebP's VP8L chunk lacks its 0x2F signature") }
                let bits = header.littleEndian(at: 1, count: 4)
                if bitstream == nil { bitstream = (1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)) }
                output += header
                state = .passing(remaining: rest)
            case .passing(let remaining):
                if remaining == 0 {
                    try nextChunk()
                    continue
                }
                guard !input.isEmpty else { return }
                let part = input.take(upTo: remaining)
                output.append(contentsOf: part)
                state = .passing(remaining: remaining - part.count)
            case .blanking(let remaining):
                if remaining == 0 {
                    try nextChunk()
                    continue
                }
                guard !input.isEmpty else { return }
                let count = input.take(upTo: remaining).count
                output.append(contentsOf: repeatElement(0, count: count))
                state = .blanking(remaining: remaining - count)
            case .trailing:
                log.dropTrailing(&input)
                return
            }
        }
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        guard case .trailing = state else { throw .malformed("the WebP ends before the end its RIFF size declares") }
        guard hasImage else { throw .malformed("the WebP has no image data (no VP8, VP8L or ANMF chunk)") }
    }

    private mutating func nextChunk() throws(MediaError) {
        if chunkStart == riffEnd {
            state = .trailing
            return
        }
        guard riffEnd - chunkStart >= 8 else {
            throw .malformed("the WebP has a chunk header that crosses the end of its RIFF container")
        }
        gather.start(8)
        state = .chunkHeader
    }

    private mutating func chunk(header: [UInt8], into output: inout [UInt8]) throws(MediaError) {
        let type = FourCC(header, at: 0)
        let size = header.littleEndian(at: 4, count: 4)
        let payloadStart = chunkStart + 8
        guard size <= riffEnd - payloadStart else {
            throw .malformed("the WebP has a \(type) chunk of \(size) bytes that runs past the end of its RIFF "
                + "container")
        }
        // The pad byte after an odd payload, unless the container ends right after the payload (a lax writer).
        let pad = min(size & 1, riffEnd - payloadStart - size)
        chunkStart = payloadStart + size + pad
        if [FourCC("VP8 "), FourCC("VP8L"), FourCC("ANMF")].contains(type) { hasImage = true }
        switch type {
        case FourCC("VP8X"):
            guard size == 10 else { throw .malformed("the WebP's VP8X chunk is \(size) bytes, not 10") }
            output += header
            gather.start(10)
            state = .extendedHeader(pad: pad)
        case FourCC("VP8 "):
            guard size >= 10 else { throw .malformed("the WebP's VP8 chunk is too short for a frame header") }
            output += header
            gather.start(10)
            state = .lossyHeader(rest: size - 10 + pad)
        case FourCC("VP8L"):
            guard size >= 5 else { throw .malformed("the WebP's VP8L chunk is too short for its header") }
            output += header
            gather.start(5)
            state = .losslessHeader(rest: size - 5 + pad)
        case FourCC("EXIF"), FourCC("XMP "):
            log.note(type == FourCC("EXIF") ? "EXIF" : "XMP")
            output += FourCC("JUNK").bytes + header[4 ..< 8]
            state = .blanking(remaining: size + pad)
        default:
            output += header
            state = .passing(remaining: size + pad)
        }
    }
}
