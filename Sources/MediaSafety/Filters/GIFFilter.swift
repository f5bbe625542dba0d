/// GIF: the header and logical screen descriptor (which give the dimensions) and the color tables, then block by
/// block. Comment extensions are dropped, and application extensions other than NETSCAPE2.0 / ANIMEXTS1.0 (looping)
/// and ICCRGBG1012 (color profile) are dropped (XMP's "XMP DataXMP", ImageMagick's IPTC, unknown ones). Graphic
/// control and plain text extensions, image descriptors and image data are copied unchanged as they stream, sub-block
/// by sub-block. Bytes after the trailer are dropped.
struct GIFFilter: MediaFilter {
    private indirect enum State: Sendable {
        /// Gathering the signature and the logical screen descriptor (13 bytes).
        case header
        /// Copying a color table, then going on with `then`.
        case colorTable(remaining: Int, then: State)
        /// Reading a block's introducer.
        case block
        case extensionLabel
        /// Reading the size of an application extension's first sub-block (its identifier).
        case applicationSize
        /// Gathering that sub-block.
        case applicationIdentifier
        /// Gathering an image descriptor's 9 bytes after 0x2C.
        case imageDescriptor
        /// Reading the LZW minimum code size before the image data.
        case codeSize
        /// A sequence of data sub-blocks, up to its zero-length terminator: copied or dropped.
        case subBlocks(keep: Bool, remaining: Int)
        /// After the trailer.
        case trailing
    }

    private static let keptApplications: Set<[UInt8]> = [Array("NETSCAPE2.0".utf8), Array("ANIMEXTS1.0".utf8),
                                                          Array("ICCRGBG1012".utf8)]

    private var state = State.header
    private var gather = Gather()
    private(set) var dimensions: (width: Int, height: Int)?
    private var log = RemovalLog()

    init() { gather.start(13) }

    var removed: [String] { log.names }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        while true {
            switch state {
            case .header:
                guard gather.fill(from: &input) else { return }
                let header = gather.bytes
                guard header.starts(withASCII: "GIF87a") || header.starts(withASCII: "GIF89a") else {
                    throw .malformed("the GIF does not start with its GIF87a or GIF89a signature")
                }
                dimensions = (header.littleEndian(at: 6, count: 2), header.littleEndian(at: 8, count: 2))
                output += header
                state = Self.afterColorTableFlag(header[10], then: .block)
            case .colorTable(let remaining, let then):
                if remaining == 0 {
                    state = then
                    continue
                }
                guard !input.isEmpty else { return }
                let part = input.take(upTo: remaining)
                output.append(contentsOf: part)
                state = .colorTable(remaining: remaining - part.count, then: then)
            case .block:
                guard let introducer = input.next() else { return }
                switch introducer {
                case 0x21:
                    state = .extensionLabel
                case 0x2C:
                    gather.start(9)
                    state = .imageDescriptor
                case 0x3B:
                    output.append(0x3B)
                    state = .trailing
                default:
                    throw .malformed("the GIF has a byte (0x\(hex(introducer))) where a block belongs")
                }
            case .extensionLabel:
                guard let label = input.next() else { return }
                switch label {
                case 0xFE:
                    log.note("comment")
                    state = .subBlocks(keep: false, remaining: 0)
                case 0xFF:
                    state = .applicationSize
                default:  // graphic control, plain text, unknown labels
                    output += [0x21, label]
                    state = .subBlocks(keep: true, remaining: 0)
                }
            case .applicationSize:
                guard let size = input.next() else { return }
                if size == 0 {  // an application extension with no data at all: dropped
                    log.note("application data")
                    state = .block
                } else {
                    gather.start(Int(size))
                    state = .applicationIdentifier
                }
            case .applicationIdentifier:
                guard gather.fill(from: &input) else { return }
                let identifier = gather.bytes
                if Self.keptApplications.contains(identifier) {
                    output += [0x21, 0xFF, UInt8(identifier.count)] + identifier
                    state = .subBlocks(keep: true, remaining: 0)
                } else {
                    let name = switch identifier {
                    case Array("XMP DataXMP".utf8): "XMP"
                    case Array("MGK8BIM0000".utf8), Array("MGKIPTC0000".utf8): "IPTC"
                    default: "application data"
                    }
                    log.note(name)
                    state = .subBlocks(keep: false, remaining: 0)
                }
            case .imageDescriptor:
                guard gather.fill(from: &input) else { return }
                output.append(0x2C)
                output += gather.bytes
                state = Self.afterColorTableFlag(gather.bytes[8], then: .codeSize)
            case .codeSize:
                guard let size = input.next() else { return }
                output.append(size)
                state = .subBlocks(keep: true, remaining: 0)
            case .subBlocks(let keep, let remaining):
                guard !input.isEmpty else { return }
                if remaining == 0 {
                    let size = input.next() ?? 0
                    if keep { output.append(size) }
                    state = size == 0 ? .block : .subBlocks(keep: keep, remaining: Int(size))
                } else {
                    let part = input.take(upTo: remaining)
                    if keep { output.append(contentsOf: part) }
                    state = .subBlocks(keep: keep, remaining: remaining - part.count)
                }
            case .trailing:
                log.dropTrailing(&input)
                return
            }
        }
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        guard case .trailing = state else { throw .malformed("the GIF ends before its trailer") }
    }

    /// A color table of the size a packed field gives, when its flag (0x80) is set, before `then`.
    private static func afterColorTableFlag(_ packed: UInt8, then: State) -> State {
        packed & 0x80 == 0 ? then : .colorTable(remaining: 3 << (Int(packed & 7) + 1), then: then)
    }
}
