/// A request's `Range: bytes=…` against a representation of known size (RFC 9110 §14): the part to send.
///
/// One range only: a header asking for several (or in another unit) is answered with the whole representation, as
/// the RFC allows; a syntactically valid range that lies wholly past the end is unsatisfiable (416).
public enum ByteRange: Equatable, Sendable {
    /// Send everything (no range asked, one not understood, or several).
    case whole
    /// Send bytes `lowerBound ..< upperBound` with 206.
    case part(Range<Int>)
    /// Answer 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// The part of a `size`-byte representation that `header` asks for.
    public static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header else { return .whole }
        let trimmed = header.trimmingHTTPWhitespace
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = trimmed.dropFirst("bytes=".count).trimmingHTTPWhitespace
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingHTTPWhitespace, last = spec[spec.index(after: dash)...].trimmingHTTPWhitespace
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit), first.count <= 18, last.count <= 18
        else { return .whole }
        if first.isEmpty {
            // A suffix: the last N bytes.
            guard let count = Int(last) else { return .whole }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - count) ..< size)
        }
        guard let start = Int(first) else { return .whole }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .part(start ..< size) }
        guard let end = Int(last), end >= start else { return .whole }
        return .part(start ..< min(end, size - 1) + 1)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
