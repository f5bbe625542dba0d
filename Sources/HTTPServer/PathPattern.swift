/// A path template matched against raw request targets: literal segments, and `{name}` or `*` for any one
/// non-empty segment ("/v1/interactions/{id}/events").
///
/// Matches the target's path only: the query and fragment are ignored, and an absolute-form target
/// ("http://host/path") is matched by its path. Segments are compared as sent, without percent-decoding.
public struct PathPattern: Sendable, Equatable {
    enum Segment: Sendable, Equatable {
        case literal([UInt8])
        case any
    }

    let segments: [Segment]

    /// A pattern from a route template.
    public init(_ template: String) {
        segments = template.split(separator: "/", omittingEmptySubsequences: true).map { part in
            part == "*" || (part.hasPrefix("{") && part.hasSuffix("}")) ? .any : .literal(Array(part.utf8))
        }
    }

    /// Whether the request target `target` (as sent on the request line) names a path this pattern matches.
    public func matches(target: UnsafeRawBufferPointer) -> Bool {
        let bytes = target.bindMemory(to: UInt8.self)
        var index = Self.pathStart(in: bytes)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "/") else { return false }
        let end = bytes[index...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        var segment = 0
        while index < end {
            index += 1 // the slash
            let next = bytes[index ..< end].firstIndex(of: UInt8(ascii: "/")) ?? end
            let part = UnsafeBufferPointer(rebasing: bytes[index ..< next])
            guard segment < segments.count else { return false }
            switch segments[segment] {
            case .any: if part.isEmpty { return false }
            case .literal(let literal): if !literal.elementsEqual(part) { return false }
            }
            segment += 1
            index = next
        }
        return segment == segments.count
    }

    /// Whether `target` matches (a convenience for tests and callers holding text).
    public func matches(target: String) -> Bool {
        var text = target
        return text.withUTF8 { matches(target: UnsafeRawBufferPointer($0)) }
    }

    /// Where the path begins: at once in origin form ("/path"), after the authority in absolute form
    /// ("http://host:8080/path"); the end (no path) otherwise.
    private static func pathStart(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        if bytes.first == UInt8(ascii: "/") { return 0 }
        let separator = Array("://".utf8)
        guard bytes.count > separator.count,
              let colon = (0 ... bytes.count - separator.count).first(where: {
                  bytes[$0 ..< $0 + separator.count].elementsEqual(separator)
              })
        else { return bytes.count }
        let authority = colon + separator.count
        return bytes[authority...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
    }
}
