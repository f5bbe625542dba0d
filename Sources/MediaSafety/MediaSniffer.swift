/// Decides what a file is from its first bytes (magic numbers), whatever its declared Content-Type says.
public enum MediaSniffer {
    /// Bytes needed at most to decide: the caller buffers up to this many (or the whole file when it is shorter)
    /// before calling ``detect(_:complete:)``. 64 bytes let an ISO-BMFF `ftyp` box show up to twelve brands.
    ///
    /// Buffering fewer and passing `complete: false` gives `needMore`, not a guess.
    public static let prefixLength = 64

    /// What the first bytes say.
    public enum Verdict: Sendable, Equatable {
        /// The file is of this type (a sanitizer for it still checks the rest of the file).
        case type(MediaType)
        /// Too few bytes to decide: call again with more (or with `complete: true` at the end of the file).
        case needMore
        /// Not a type this service accepts: refuse the upload.
        case unknown
    }

    /// The verdict on a file's first bytes: `prefix` is the file's start, shorter than ``prefixLength`` only when
    /// more may come (`complete: false`, giving `needMore` unless a signature already matched) or when it is the
    /// whole file (`complete: true`). Bytes past ``prefixLength`` are ignored.
    ///
    /// A text verdict covers only the prefix: the `text` sanitizer checks the rest of the file as it streams.
    public static func detect(_ prefix: [UInt8], complete: Bool) -> Verdict {
        let bytes = Array(prefix.prefix(prefixLength))
        if let type = signature(bytes) { return .type(type) }
        if bytes.count < prefixLength, !complete { return .needMore }
        if bytes.count >= 8, FourCC(bytes, at: 4) == FourCC("ftyp") {
            return isoBaseMediaType(bytes).map(Verdict.type) ?? .unknown
        }
        // The whole file, when complete and short: a character cut at its end is then an error, not a cut.
        let cutAllowed = !complete || prefix.count > prefixLength
        return isText(bytes, cutAllowed: cutAllowed) ? .type(.text) : .unknown
    }

    /// The type whose fixed signature `bytes` starts with, if any.
    private static func signature(_ bytes: [UInt8]) -> MediaType? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(withASCII: "GIF87a") || bytes.starts(withASCII: "GIF89a") { return .gif }
        if bytes.count >= 12, bytes.starts(withASCII: "RIFF"), FourCC(bytes, at: 8) == FourCC("WEBP") { return .webp }
        if bytes.starts(withASCII: "%PDF-") { return .pdf }
        return nil
    }

    /// HEIC or HEIF from an `ftyp` box's major and compatible brands (those within `bytes`); nil for other
    /// ISO-BMFF files (MP4, QuickTime, AVIF).
    private static func isoBaseMediaType(_ bytes: [UInt8]) -> MediaType? {
        let size = bytes.bigEndian(at: 0, count: 4)
        guard size >= 16, bytes.count >= 12 else { return nil }
        var brands = [FourCC(bytes, at: 8)]
        var offset = 16
        while offset + 4 <= min(size, bytes.count) {
            brands.append(FourCC(bytes, at: offset))
            offset += 4
        }
        let hevc: Set = [FourCC("heic"), FourCC("heix"), FourCC("heim"), FourCC("heis"), FourCC("hevc"), FourCC("hevx")]
        if brands.contains(where: hevc.contains) { return .heic }
        if brands.contains(FourCC("avif")) || brands.contains(FourCC("avis")) { return nil }
        if brands.contains(FourCC("mif1")) || brands.contains(FourCC("msf1")) { return .heif }
        return nil
    }

    /// Whether `bytes` read as text; `cutAllowed` lets the last character be cut short (the prefix ends there,
    /// not the file).
    private static func isText(_ bytes: [UInt8], cutAllowed: Bool) -> Bool {
        guard !bytes.isEmpty else { return false }
        var checker = UTF8TextChecker()
        for byte in bytes {
            guard checker.accept(byte) else { return false }
        }
        return cutAllowed || checker.isAtCharacterBoundary
    }
}
