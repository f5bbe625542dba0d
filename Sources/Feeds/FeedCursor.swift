import Foundation

/// The opaque position after the last item of a page: that item's `(published_at, id)`, keyset-style, so it stays
/// correct while items are inserted. Published times are kept as exact microseconds since the epoch.
public struct FeedCursor: Sendable, Hashable {
    /// Microseconds since 1970 of the last item's `published_at`.
    public let publishedMicros: Int64
    /// The last item's id.
    public let id: UUID

    /// A cursor after the item with these keys.
    public init(publishedMicros: Int64, id: UUID) {
        self.publishedMicros = publishedMicros
        self.id = id
    }

    /// The opaque text form (base64url of `v1.<micros>.<id>`).
    public var encoded: String {
        let text = "v1.\(publishedMicros).\(id.uuidString.lowercased())"
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Parses the text form; nil when it is not one of ours.
    public init?(encoded: String) {
        guard encoded.utf8.count <= 128 else { return nil }
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let micros = Int64(parts[1]),
              let id = UUID(uuidString: String(parts[2])) else { return nil }
        self.init(publishedMicros: micros, id: id)
    }
}
