/// One segment level of a built routing trie: immutable once built, so `Sendable` as it stands.
///
/// A class so that matching walks references instead of copying nodes (and retaining their dictionaries) level
/// by level.
final class RouteNode: Sendable {
    enum Match {
        case found(RouteHandler, parameters: [String: String])
        case methodNotAllowed([String])
        case notFound
    }

    let literals: [Substring: RouteNode]
    let parameterName: String?
    let parameterChild: RouteNode?
    let handlers: [String: RouteHandler]

    private init(literals: [Substring: RouteNode], parameterName: String?, parameterChild: RouteNode?,
                 handlers: [String: RouteHandler]) {
        self.literals = literals
        self.parameterName = parameterName
        self.parameterChild = parameterChild
        self.handlers = handlers
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
        return RouteNode(literals: literalEntries.mapValues { build($0) },
                         parameterName: parameterName,
                         parameterChild: parameterEntries.isEmpty ? nil : build(parameterEntries),
                         handlers: handlers)
    }

    func match(method: String, path: String) -> Match {
        var parameters: [String: String] = [:]
        parameters.reserveCapacity(2)
        guard let node = find(RouteNode.segments(of: path)[...], &parameters) else { return .notFound }
        if let handler = node.handlers[method] ?? (method == "HEAD" ? node.handlers["GET"] : nil) {
            return .found(handler, parameters: parameters)
        }
        if node.handlers.isEmpty { return .notFound }
        var allowed = Set(node.handlers.keys)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return .methodNotAllowed(allowed.sorted())
    }

    private func find(_ segments: ArraySlice<Substring>, _ parameters: inout [String: String]) -> RouteNode? {
        guard let head = segments.first else { return self }
        if let literal = literals[head], let found = literal.find(segments.dropFirst(), &parameters) {
            return found
        }
        if let name = parameterName, let child = parameterChild,
           let found = child.find(segments.dropFirst(), &parameters) {
            parameters[name] = String(head)
            return found
        }
        return nil
    }
}
