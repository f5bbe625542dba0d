import Foundation

/// `Content-Disposition` both ways: the file name a client declares for an upload (kept only when harmless), and
/// the header a download carries (RFC 6266, with RFC 8187's UTF-8 form for names that are not plain ASCII).
public enum ContentDisposition {
    /// The longest file name kept, in UTF-8 bytes.
    public static let maximumNameLength = 255

    /// A client's file name made safe to store and show: no directories (only the last path component is kept), no
    /// control or bidirectional-override characters, at most ``maximumNameLength`` bytes; nil when nothing is left.
    public static func safeName(_ name: String?) -> String? {
        guard let name else { return nil }
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in last.unicodeScalars where !isUnsafe(scalar) {
            bytes += String(scalar).utf8.count
            guard bytes <= maximumNameLength else { break }
            kept.append(scalar)
        }
        let trimmed = String(kept).trimmingHTTPWhitespace
        guard !trimmed.isEmpty, trimmed != ".", trimmed != ".." else { return nil }
        return String(trimmed)
    }

    /// The `filename` (or RFC 8187 `filename*`) parameter of a request's `Content-Disposition`, if any.
    public static func declaredName(in header: String?) -> String? {
        guard let header else { return nil }
        var plain: String?
        for parameter in header.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = parts[0].trimmingHTTPWhitespace.lowercased()
            var value = String(parts[1].trimmingHTTPWhitespace)
            if key == "filename*" {
                // charset'language'percent-encoded; only UTF-8 is accepted.
                let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3, pieces[0].lowercased() == "utf-8", let decoded = pieces[2].removingPercentEncoding {
                    return decoded
                }
            } else if key == "filename" {
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast()).replacingBackslashEscapes
                }
                plain = value
            }
        }
        return plain
    }

    /// The header for sending `name`: `attachment` (or `inline`), an ASCII fallback name, and the exact name in
    /// RFC 8187 form.
    public static func header(name: String?, inline: Bool) -> String {
        let kind = inline ? "inline" : "attachment"
        guard let name, !name.isEmpty else { return kind }
        let fallback = String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\" && scalar != "%"
                ? Character(scalar) : "_"
        })
        var encoded = ""
        for byte in name.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$&+-.^_`|~".utf8.contains(byte) {
                encoded.append(Character(Unicode.Scalar(byte)))
            } else {
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return "\(kind); filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || value == 0x7F || (0x80 ... 0x9F).contains(value)
            || (0x202A ... 0x202E).contains(value) || (0x2066 ... 0x2069).contains(value)  // bidirectional overrides
            || value == 0x200E || value == 0x200F || value == 0xFEFF
    }
}

private extension String {
    /// A quoted-string's content with its backslash escapes undone.
    var replacingBackslashEscapes: String {
        var result = ""
        var escaping = false
        for character in self {
            if escaping || character != "\\" {
                result.append(character)
                escaping = false
            } else {
                escaping = true
            }
        }
        return result
    }
}
