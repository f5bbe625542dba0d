#if canImport(Glibc)
import Glibc
#endif

/// One segment level of a built routing trie: immutable once built, so `Sendable` as it stands.
///
/// A class so that matching walks references instead of copying nodes (and retaining their dictionaries) level
/// by level.
final class RouteNode: Sendable {
    enum Match {
        case found(RouteHandler, parameters: RouteParameters)
        case methodNotAllowed([String])
        case notFound
    }

    /// The literal segments that continue from here, scanned in order: a level has a handful, and comparing bytes
    /// beats hashing the request's segment.
    let literals: [(segment: [UInt8], node: RouteNode)]
    let parameterName: String?
    let parameterChild: RouteNode?
    /// The routes ending here, by method (a handful at most, so a list).
    let handlers: [(method: String, handler: RouteHandler)]

    private init(literals: [(segment: [UInt8], node: RouteNode)], parameterName: String?, parameterChild: RouteNode?,
                 handlers: [(method: String, handler: RouteHandler)]) {
        self.literals = literals
        self.parameterName = parameterName
        self.parameterChild = parameterChild
        self.handlers = handlers
    }

    /// The handler registered here for `method`.
    private func handler(for method: String) -> RouteHandler? {
        for entry in handlers where entry.method == method { return entry.handler }
        return nil
    }

    /// The child for the literal segment `segment`, compared byte for byte (as RFC 3986 compares paths: no Unicode
    /// normalisation, which `String`'s equality would apply).
    ///
    /// Unretained, and the entries read in place: the trie lives as long as the router, and every server thread walks
    /// it, so a retain here would be a write to memory all of them share.
    private func literal(_ segment: UnsafeBufferPointer<UInt8>) -> Unmanaged<RouteNode>? {
        literals.withUnsafeBufferPointer { entries in
            for index in entries.indices where entries[index].segment.count == segment.count {
                let equal = entries[index].segment.withUnsafeBufferPointer { literal in
                    segment.isEmpty || memcmp(literal.baseAddress!, segment.baseAddress!, segment.count) == 0
                }
                if equal { return Unmanaged.passUnretained(entries[index].node) }
            }
            return nil
        }
    }

    static func segments(of path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// The trie of `registrations`: one node per distinct path prefix.
    static func build(_ registrations: [RouteRegistration]) -> RouteNode {
        build(registrations.map { (segments: segments(of: $0.handler.template)[...], registration: $0) })
    }

    private static func build(_ entries: [(segments: ArraySlice<Substring>, registration: RouteRegistration)]) -> RouteNode {
        var handlers: [String: RouteHandler] = [:]
        var literalEntries: [Substring: [(segments: ArraySlice<Substring>, registration: RouteRegistration)]] = [:]
        var parameterEntries: [(segments: ArraySlice<Substring>, registration: RouteRegistration)] = []
        var parameterName: String?
        for entry in entries {
            guard let head = entry.segments.first else {
                handlers[entry.registration.method] = entry.registration.handler
                continue
            }
            let rest = (segments: entry.segments.dropFirst(), registration: entry.registration)
            if head.hasPrefix("{") && head.hasSuffix("}") {
                let name = String(head.dropFirst().dropLast())
                precondition(parameterName == nil || parameterName == name,
                             "conflicting parameter names in \(entry.registration.handler.template)")
                parameterName = name
                parameterEntries.append(rest)
            } else {
                literalEntries[head, default: []].append(rest)
            }
        }
        // In a fixed order (a dictionary's differs from process to process, and so would the work of every match).
        return RouteNode(literals: literalEntries.sorted { $0.key < $1.key }
                            .map { (segment: Array($0.key.utf8), node: build($0.value)) },
                         parameterName: parameterName,
                         parameterChild: parameterEntries.isEmpty ? nil : build(parameterEntries),
                         handlers: handlers.sorted { $0.key < $1.key }.map { (method: $0.key, handler: $0.value) })
    }

    /// The route for `method` and `path`. Where a literal segment and a parameter both fit, the literal wins, unless
    /// nothing under it serves the request: then the parameter's routes are tried (so `/feeds/special` with only
    /// `/feeds/special/items` and `/feeds/{key}` registered is the feed "special", not a 404). A path that some route
    /// fits, but for other methods only, is 405 with those methods.
    func match(method: String, path: String) -> Match {
        var path = path
        return path.withUTF8 { bytes in match(method: method, bytes: bytes) }
    }

    private func match(method: String, bytes path: UnsafeBufferPointer<UInt8>) -> Match {
        var parameters = RouteParameters()
        if let handler = find(path, from: 0, &parameters, { $0.handler(for: method) ?? (method == "HEAD" ? $0.handler(for: "GET") : nil) }) {
            return .found(handler, parameters: parameters)
        }
        let allowed = find(path, from: 0, &parameters) { node -> [String]? in
            guard !node.handlers.isEmpty else { return nil }
            var allowed = Set(node.handlers.map(\.method))
            if allowed.contains("GET") { allowed.insert("HEAD") }
            return allowed.sorted()
        }
        return allowed.map { .methodNotAllowed($0) } ?? .notFound
    }

    /// What `accept` makes of the first node, literal segments before parameters, that the segments of `path` lead
    /// to (empty segments skipped, as `segments(of:)` does) and that `accept` takes; binds the parameters on the way.
    /// Walks the path's UTF-8 bytes in place, from `offset`: no array of segments and no substring per request.
    /// Splitting at the ASCII `/` byte never splits a multi-byte character.
    private func find<Found>(_ path: UnsafeBufferPointer<UInt8>, from offset: Int, _ parameters: inout RouteParameters,
                             _ accept: (RouteNode) -> Found?) -> Found? {
        let slash = UInt8(ascii: "/")
        var start = offset
        while start < path.count && path[start] == slash { start += 1 }
        guard start < path.count else { return accept(self) }
        var end = start
        while end < path.count && path[end] != slash { end += 1 }
        let head = UnsafeBufferPointer(rebasing: path[start ..< end])
        if let literal = literal(head),
           let found = literal._withUnsafeGuaranteedRef({ $0.find(path, from: end, &parameters, accept) }) {
            return found
        }
        if let name = parameterName, let child = parameterChild, let found = child.find(path, from: end, &parameters, accept) {
            parameters[name] = String(decoding: head, as: UTF8.self)
            return found
        }
        return nil
    }
}
