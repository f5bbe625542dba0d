import HTTPServer
import MediaSafety

// The one place where attachment errors become problem responses (RFC 9457).

extension AttachmentError: ProblemConvertible {
    /// 404 for what the caller may not see, 415 for types, 413 for size, 507 for a full quota, 429 over the upload
    /// rate, 422 for a message's unusable attachment or an infected upload, 403 for an infected file, 503 when the
    /// malware scanner gives no verdict.
    public var problem: Problem {
        switch self {
        case .notFound:
            return .notFound("No such attachment.")
        case .typeNotAccepted(let declared):
            let named = declared.map { "Content-Type '\($0)' is not accepted" } ?? "The upload has no Content-Type"
            return Problem(status: 415, title: "Unsupported Media Type",
                           detail: "\(named); send one of \(AttachmentError.acceptedTypes).",
                           extensions: ["declared_type": declared ?? ""])
        case .typeMismatch(let declared, let detected):
            let found = detected.map { "are \($0.rawValue)" } ?? "are of no accepted type"
            return Problem(status: 415, title: "Unsupported Media Type",
                           detail: "The upload declares \(declared) but its bytes \(found).",
                           extensions: ["declared_type": declared, "detected_type": detected?.rawValue ?? "unknown"])
        case .unreadable(let reason):
            return Problem(status: 415, title: "Unsupported Media Type", detail: reason)
        case .tooLarge(let limit):
            return Problem(status: 413, title: "Content Too Large",
                           detail: "An attachment may be at most \(Problem.grouped(limit)) bytes.",
                           headers: ["Connection": "close"])
        case .quotaExceeded(let limit):
            return Problem(status: 507, title: "Insufficient Storage",
                           detail: "This tenant's attachments would exceed its quota of \(Problem.grouped(Int(limit))) bytes.")
        case .rateLimited(let retryAfter):
            return Problem(status: 429, title: "Too Many Requests", detail: "Too many uploads; retry later.",
                           headers: ["Retry-After": String(retryAfter)])
        case .notUsable(let id):
            return Problem(status: 422, title: "Unprocessable Content",
                           detail: "Attachment \(id) is not an unused upload of yours to this interaction.",
                           extensions: ["parameter": "attachment_ids"])
        case .infected:
            return Problem(status: 403, title: "Forbidden", detail: "This file failed a malware scan; it is not served.")
        case .malwareFound(let signature):
            return Problem(status: 422, title: "Unprocessable Content",
                           detail: "The file failed a malware scan (\(signature)); it was not kept.",
                           extensions: ["signature": signature])
        case .scanUnavailable:
            // What went wrong with the scanner is the operator's business, not the uploader's.
            return .serviceUnavailable("Uploads are scanned for malware and the scanner is not answering; retry later.",
                                       retryAfterSeconds: 30)
        case .bytesMissing:
            return Problem(status: 500, title: "Internal Server Error", detail: "The attachment's bytes are missing.")
        }
    }

    static let acceptedTypes = MediaType.allCases.map(\.rawValue).joined(separator: ", ")
}
