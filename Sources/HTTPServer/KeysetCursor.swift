import Foundation

/// An opaque position in a list ordered by `(timestamp, id)` descending — keyset pagination that stays correct while
/// rows are inserted. The timestamp is kept as exact microseconds since the epoch (compare it in SQL with
/// `timestamptz 'epoch' + $n::bigint * interval '1 microsecond'`).
public struct KeysetCursor: Sendable, Hashable {
    /// Microseconds since 1970 of the last row's timestamp.
    public let micros: Int64
    /// The last row's id.
    public let id: UUID

    /// A cursor after the row with these keys.
    public init(micros: Int64, id: UUID) {
        self.micros = micros
        self.id = id
    }

    /// Timestamps a cursor may carry: years 1 to 9999. Anything else was forged (and near the ends of Int64 it would
    /// overflow PostgreSQL's interval arithmetic).
    static let range: ClosedRange<Int64> = -62_135_596_800_000_000 ... 253_402_300_799_999_999

    /// The opaque text form (base64url of `v1.<micros>.<id>`).
    public var encoded: String {
        let text = "v1.\(micros).\(id.uuidString.lowercased())"
        return Base64URL.encode(Array(text.utf8))
    }

    /// Parses the text form; nil when it is not one of ours.
    public init?(encoded: String) {
        guard encoded.utf8.count <= 128 else { return nil }
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let micros = Int64(parts[1]), KeysetCursor.range.contains(micros),
              let id = UUID(uuidString: String(parts[2])) else { return nil }
        self.init(micros: micros, id: id)
    }
}
