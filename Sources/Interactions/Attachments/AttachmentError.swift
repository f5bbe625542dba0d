import Foundation
import MediaSafety

/// Why an upload, a download or a message's attachments were refused. The routes turn it into a problem
/// (`AttachmentProblems.swift`).
public enum AttachmentError: Error, Sendable, Equatable {
    /// No attachment by this id that the caller may see (another tenant's, another customer's, unused by someone
    /// else, not finished uploading): callers must not learn which.
    case notFound
    /// The declared `Content-Type` is missing or not one of the accepted types.
    case typeNotAccepted(declared: String?)
    /// The bytes are of type `detected` (nil: of no accepted type), not the `declared` one.
    case typeMismatch(declared: String, detected: MediaType?)
    /// The file is not what its type promises (truncated, malformed) or cannot be made safe to keep.
    case unreadable(String)
    /// The body is, or grew, over `limit` bytes.
    case tooLarge(limit: Int)
    /// The tenant's stored attachments would exceed its quota of `limit` bytes.
    case quotaExceeded(limit: Int64)
    /// The caller uploads faster than its allowance; retry after `retryAfter` seconds.
    case rateLimited(retryAfter: Int)
    /// A message names `id`, which is not an unused, finished upload of the sender's to this interaction.
    case notUsable(String)
    /// A malware scan found the file infected: it is never served.
    case infected
    /// The upload's malware scan matched `signature`: it is refused and nothing of it is kept.
    case malwareFound(signature: String)
    /// Uploads are scanned and the scanner gave no verdict (unreachable, too slow, refused the file): nothing is kept.
    case scanUnavailable(String)
    /// A stored attachment's bytes are missing (the storage lost them).
    case bytesMissing(UUID)
}
