import Foundation

/// A file sent with a message: its metadata, as the server gives it (in ``SwitchboardClient/upload(_:type:filename:to:idempotencyKey:)``'s
/// answer, on a ``Message`` and in its live event). The bytes are fetched with
/// ``SwitchboardClient/download(_:to:)``.
public struct Attachment: Decodable, Sendable, Equatable {
    /// The attachment's id (a lower-case UUID): what ``SwitchboardClient/sendMessage(_:attachments:to:)`` and
    /// ``SwitchboardClient/download(_:to:)`` take.
    public let id: String
    /// The type the server found the bytes to be (`image/jpeg`, `application/pdf`, `text/plain`…); within the
    /// HEIC/HEIF family it may differ from the one declared at upload.
    public let contentType: String
    /// The stored size in bytes, after the server removed location metadata from images.
    public let size: Int64
    /// The SHA-256 of the stored bytes, in lower-case hex; also the download's `ETag` (in quotes).
    public let sha256: String
    /// The file name the uploader gave, made safe by the server (no directories); nil when none was given.
    public let filename: String?
    /// An image's width in pixels; nil for other files.
    public let width: Int?
    /// An image's height in pixels; nil for other files.
    public let height: Int?
    /// The malware scan's verdict: `not_scanned`, `clean` or `infected` (an infected file is never served).
    public let scanState: String
    /// When the upload finished.
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, size, sha256, filename, width, height
        case contentType = "content_type", scanState = "scan_state", createdAt = "created_at"
    }
}
