import Foundation

/// The pure decisions of a resumable download (``SwitchboardClient/download(_:to:)``): how to ask for an
/// attachment's bytes given what the destination file already holds, and what to make of the answer.
///
/// A partial file is resumed only when the validator of the answer it came from (its strong `ETag`) was
/// remembered: the request then says `Range: bytes=<size>-` with `If-Range: <etag>`, so that if the bytes behind
/// the URL are not those any more, the server sends the whole new file (200) instead of a part that would not fit.
/// Without a validator the file is downloaded again from the start.
struct ResumePlan: Sendable, Equatable {
    /// The bytes the destination file holds now (0 when it does not exist).
    let existingSize: Int64
    /// The strong `ETag` of the answer those bytes came from; nil when none was remembered (or it was weak).
    let etag: String?

    /// The plan for a file holding `existingSize` bytes that came from an answer tagged `etag`.
    init(existingSize: Int64, etag: String?) {
        self.existingSize = max(0, existingSize)
        self.etag = etag.flatMap(Self.validator)
    }

    /// Whether the request asks for the rest of the file only.
    var isResuming: Bool { existingSize > 0 && etag != nil }

    /// The headers that ask for what is missing: none for the whole file, `Range` and `If-Range` for the rest.
    var headers: [String: String] {
        guard isResuming, let etag else { return [:] }
        return ["Range": "bytes=\(existingSize)-", "If-Range": etag]
    }

    /// What to do with an answer.
    enum Action: Sendable, Equatable {
        /// The body is the whole file (of `size` bytes, when announced): write it from the start, replacing what the
        /// file holds, and remember `etag` (nil: forget the old one; the file cannot be resumed then).
        case replace(size: Int64?, etag: String?)
        /// The body is the rest of the file: append it; the file then holds `size` bytes.
        case append(size: Int64)
        /// The file is already complete, with `size` bytes: nothing to write.
        case complete(size: Int64)
        /// The answer does not fit the file (a part that does not continue it, or a file longer than the
        /// attachment): remove both and ask for the whole file.
        case startOver
        /// An error answer: its body is the problem details.
        case refuse
        /// A status a download does not expect (a 204, a 304…).
        case unexpected
    }

    /// What to do with an answer of `status`, with the answer's `Content-Range`, `ETag` and `Content-Length`
    /// (negative or nil when unknown).
    func action(status: Int, contentRange: String?, etag: String?, contentLength: Int64?) -> Action {
        switch status {
        case 200:
            return .replace(size: contentLength.flatMap { $0 >= 0 ? $0 : nil }, etag: etag.flatMap(Self.validator))
        case 206:
            guard isResuming, case .part(let first, let last, let total?)? = contentRange.flatMap(ContentRange.init),
                  first == existingSize, last == total - 1, etag.map({ Self.validator($0) == self.etag }) ?? true
            else { return .startOver }
            return .append(size: total)
        case 416:
            // Only a range asked for can be unsatisfiable; with If-Range matching, it means the file is complete —
            // unless it holds more than the attachment has (it is not the attachment's).
            guard isResuming else { return .refuse }
            guard case .unsatisfied(let total)? = contentRange.flatMap(ContentRange.init), total == existingSize
            else { return .startOver }
            return .complete(size: total)
        case 400...:
            return .refuse
        default:
            return .unexpected
        }
    }

    /// `etag` as `If-Range` may carry it: a strong entity tag, in quotes; nil for a weak one (`W/"…"`), which may
    /// not validate a range (RFC 9110 §13.1.5), and for anything else.
    static func validator(_ etag: String) -> String? {
        let trimmed = etag.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count >= 2, trimmed.hasPrefix("\""), trimmed.hasSuffix("\""),
              !trimmed.dropFirst().dropLast().contains("\"") else { return nil }
        return trimmed
    }

    /// Where the validator of a download into `file` is kept: next to it, as `<file>.etag` (a text file holding the
    /// `ETag` header's value, quotes included). Extended attributes would be tidier, but are not portable.
    static func sidecar(for file: URL) -> URL {
        file.appendingPathExtension("etag")
    }
}

/// A `Content-Range` header's value (RFC 9110 §14.4): the part an answer carries, or the size of the file a
/// range could not be satisfied against.
enum ContentRange: Sendable, Equatable {
    /// Bytes `first ... last` (inclusive) of a file of `total` bytes (nil: `*`, unknown).
    case part(first: Int64, last: Int64, total: Int64?)
    /// A 416's `bytes */total`.
    case unsatisfied(total: Int64)

    /// Reads `bytes first-last/total`, `bytes first-last/*` or `bytes */total`; nil for anything else.
    init?(_ header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let total: Int64? = halves[1] == "*" ? nil : Self.number(halves[1])
        if halves[1] != "*" && total == nil { return nil }
        if halves[0] == "*" {
            guard let total else { return nil }
            self = .unsatisfied(total: total)
            return
        }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last
        else { return nil }
        if let total, last >= total { return nil }
        self = .part(first: first, last: last, total: total)
    }

    /// A non-negative decimal of digits only.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}
