import Crypto
import MediaSafety

/// One upload's bytes on their way to storage, without I/O: the type decided from the first bytes (and checked
/// against the declared one), location metadata removed as the bytes pass, the stored bytes hashed and cut into
/// pieces of the storage's size. The caller stores each piece it gets back, in order.
struct UploadPipeline {
    let declared: MediaType
    let maximumBytes: Int
    let pieceSize: Int
    /// The first bytes, kept until the type is known.
    private var prefix: [UInt8] = []
    private var sanitizer: MediaSanitizer?
    private(set) var detected: MediaType?
    private let digest = SHA256Stream()
    /// Sanitized bytes not yet handed out as a piece.
    private var pending: [UInt8] = []
    /// Bytes received from the client.
    private(set) var received = 0
    /// Bytes handed out to store.
    private(set) var stored: Int64 = 0
    /// The SHA-256 of the stored bytes, once finished.
    private(set) var sha256: [UInt8] = []

    /// The most pixels an image may declare: apps decode what they are sent, and a small file that declares
    /// 100,000 × 100,000 pixels (a decompression bomb) would take a phone's memory. 100 megapixels is more than
    /// any phone camera writes.
    static let maximumPixels = 100_000_000

    init(declared: MediaType, maximumBytes: Int, pieceSize: Int) {
        self.declared = declared
        self.maximumBytes = maximumBytes
        self.pieceSize = pieceSize
    }

    /// Takes the next bytes from the client; returns the pieces now complete.
    mutating func feed(_ chunk: [UInt8]) throws(AttachmentError) -> [[UInt8]] {
        received += chunk.count
        guard received <= maximumBytes else { throw .tooLarge(limit: maximumBytes) }
        guard sanitizer != nil else {
            prefix += chunk
            guard try decide(complete: false) else { return [] }
            return try pass(prefix)
        }
        return try pass(chunk)
    }

    /// The end of the body: the last piece (possibly empty); ``sha256`` is then the digest of everything stored.
    mutating func finish() throws(AttachmentError) -> [UInt8] {
        if sanitizer == nil {
            guard try decide(complete: true) else { throw .unreadable("The upload is empty.") }
            _ = try pass(prefix)  // a small file: whatever is complete stays pending, below
        }
        do {
            let tail = try sanitizer!.finish()
            pending += tail
        } catch {
            throw .unreadable(error.sentence(for: detected ?? declared))
        }
        let last = pending
        pending = []
        digest.update(last)
        stored += Int64(last.count)
        sha256 = digest.finish()
        return last
    }

    /// Pixel dimensions of an image, once known.
    var dimensions: (width: Int, height: Int)? { sanitizer?.dimensions }

    /// Decides the type from `prefix` when it can; false while more bytes are needed.
    private mutating func decide(complete: Bool) throws(AttachmentError) -> Bool {
        switch MediaSniffer.detect(prefix, complete: complete) {
        case .needMore where !complete && prefix.count < MediaSniffer.prefixLength:
            return false
        case .type(let type):
            guard type.satisfies(declared) else { throw .typeMismatch(declared: declared.rawValue, detected: type) }
            detected = type
            sanitizer = MediaSanitizer(type: type)
            return true
        case .needMore, .unknown:
            if complete && prefix.isEmpty { return false }
            throw .typeMismatch(declared: declared.rawValue, detected: nil)
        }
    }

    private mutating func pass(_ bytes: [UInt8]) throws(AttachmentError) -> [[UInt8]] {
        if !prefix.isEmpty { prefix = [] }
        do {
            pending += try sanitizer!.feed(bytes)
        } catch {
            throw .unreadable(error.sentence(for: detected ?? declared))
        }
        if let size = sanitizer?.dimensions, size.width.multipliedReportingOverflow(by: size.height).partialValue
            > UploadPipeline.maximumPixels || size.width > 1 << 20 || size.height > 1 << 20 {
            throw .unreadable("The image declares \(size.width) × \(size.height) pixels; at most "
                              + "\(UploadPipeline.maximumPixels / 1_000_000) megapixels are accepted.")
        }
        var pieces: [[UInt8]] = []
        while pending.count >= pieceSize {
            let piece = Array(pending[..<pieceSize])
            pending.removeFirst(pieceSize)
            digest.update(piece)
            stored += Int64(piece.count)
            pieces.append(piece)
        }
        return pieces
    }
}

private extension MediaError {
    /// What to tell the uploader.
    func sentence(for type: MediaType) -> String {
        switch self {
        case .malformed(let reason), .unsupported(let reason): "The file is not an acceptable \(type.rawValue): \(reason)"
        }
    }
}
