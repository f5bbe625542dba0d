/// What an uploaded file is, named by its media type (`rawValue` is the Content-Type to store it with).
///
/// A caller must take it from `MediaSniffer.detect`, never from the upload's declared Content-Type.
public enum MediaType: String, Sendable, CaseIterable {
    /// A JPEG (JFIF or Exif) image.
    case jpeg = "image/jpeg"
    /// A PNG image (APNG included).
    case png = "image/png"
    /// A WebP image (lossy, lossless or extended).
    case webp = "image/webp"
    /// A HEIF image whose brands say HEVC coding (what iPhones write).
    case heic = "image/heic"
    /// A HEIF image with only the generic brands (`mif1`, `msf1`).
    case heif = "image/heif"
    /// A GIF image (87a or 89a, animated or not).
    case gif = "image/gif"
    /// A PDF document: recognised, passed through unchanged (its own metadata is kept).
    case pdf = "application/pdf"
    /// UTF-8 text without control characters other than tab, line feed, carriage return and form feed.
    case text = "text/plain"

    /// Whether the type is an image (it then has dimensions and its location metadata is removed); false for PDF
    /// and text, whose contents are kept as they are.
    public var isImage: Bool {
        switch self {
        case .jpeg, .png, .webp, .heic, .heif, .gif: true
        case .pdf, .text: false
        }
    }

    /// The type a declared Content-Type names ("image/jpeg; x=y", case-insensitive, parameters ignored; "image/jpg"
    /// is jpeg, "image/heic-sequence" and "image/heif-sequence" are heic and heif), nil when not accepted.
    ///
    /// A declaration only says what the client claims: check it against the detected type with ``satisfies(_:)``.
    public init?(declared: String) {
        let essence = declared.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let name = String(essence.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            .lowercased()
        switch name {
        case "image/jpg": self = .jpeg
        case "image/heic-sequence": self = .heic
        case "image/heif-sequence": self = .heif
        default:
            guard let type = MediaType(rawValue: name) else { return nil }
            self = type
        }
    }

    /// Whether a file detected as `self` satisfies a declaration of `declared` (heic and heif count as one family).
    ///
    /// Call it on the detected type with the declared one as argument; it is symmetric today, but only that way
    /// round is promised.
    public func satisfies(_ declared: MediaType) -> Bool {
        self == declared || (isHEIFFamily && declared.isHEIFFamily)
    }

    private var isHEIFFamily: Bool { self == .heic || self == .heif }
}
