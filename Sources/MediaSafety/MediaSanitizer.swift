/// Streaming sanitiser: feed an upload's chunks as they arrive, store only the bytes it returns.
///
/// Images lose their location-carrying metadata (Exif, XMP, IPTC, comments, text chunks) before any byte is
/// returned; PDF passes through unchanged and text is checked as UTF-8. Memory stays bounded: at most one header,
/// segment or box (a HEIF `meta` box, up to 4 MiB) is held back; image data streams through in the chunks it came in.
/// Nothing is decoded: only the containers are parsed.
public struct MediaSanitizer: Sendable {
    private var filter: any MediaFilter
    private var failure: MediaError?
    private var finished = false

    /// A sanitiser for a file of `type`, which must be the type `MediaSniffer.detect` found, not the declared one
    /// (the sanitiser checks the bytes against it and throws when they do not match).
    public init(type: MediaType) {
        switch type {
        case .jpeg: filter = JPEGFilter()
        case .png: filter = PNGFilter()
        case .gif: filter = GIFFilter()
        case .webp: filter = WebPFilter()
        case .heic, .heif: filter = HEIFFilter()
        case .pdf: filter = PDFFilter()
        case .text: filter = TextValidator()
        }
    }

    /// Returns the sanitised bytes to store so far (possibly empty while it buffers a header or segment): store
    /// these, never the chunk passed in. Throws MediaError; after a throw every later call throws the same error and
    /// whatever was stored of the file must be discarded.
    public mutating func feed(_ chunk: [UInt8]) throws(MediaError) -> [UInt8] {
        if let failure { throw failure }
        guard !finished else { return try fail(.malformed("the upload was fed more bytes after it was finished")) }
        var input = ByteCursor(chunk)
        var output: [UInt8] = []
        output.reserveCapacity(chunk.count)
        do {
            try filter.consume(&input, into: &output)
        } catch {
            return try fail(error)
        }
        return output
    }

    /// End of input: returns the remaining bytes to store; throws when the file is truncated or malformed. Must be
    /// called: without it a file cut short is never noticed (and held-back bytes are never returned).
    public mutating func finish() throws(MediaError) -> [UInt8] {
        if let failure { throw failure }
        guard !finished else { return [] }
        finished = true
        var output: [UInt8] = []
        do {
            try filter.finish(into: &output)
        } catch {
            return try fail(error)
        }
        return output
    }

    /// The image's width and height in pixels once its header has been read (nil before, and for PDF and text).
    /// Taken from the container's header, not from decoded pixels: trust it only after `finish` succeeded.
    public var dimensions: (width: Int, height: Int)? { filter.dimensions }

    /// Names of what was removed so far, e.g. ["EXIF", "XMP"], each once, in the order met (for logs and tests).
    /// Complete only after `finish`: metadata late in a file is found late.
    public var removed: [String] { filter.removed }

    private mutating func fail(_ error: MediaError) throws(MediaError) -> [UInt8] {
        failure = error
        throw error
    }
}
