import Foundation

/// Entity tags as conditional requests compare them (RFC 9110 §8.8.3, §13.1.2).
public enum EntityTag {
    /// Whether an `If-None-Match` list names `etag`: `*`, or the tag in weak comparison (`W/` ignored).
    public static func list(_ header: String, matches etag: String) -> Bool {
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == bare || tag == "W/" + bare
        }
    }
}
