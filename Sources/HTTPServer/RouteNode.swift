/// One segment level of the routing trie.
///
/// A class so that matching walks references instead of copying nodes (and retaining their dictionaries) level
/// by level. `@unchecked Sendable`: nodes are mutated only while routes are registered, before the router is
/// handed to a server; from then on they are only read.
final class RouteNode: @unchecked Sendable {
    struct Handler: Sendable {
        let template: String
        let responder: Responder
        var immediate: ImmediateHandler?
    }

    enum Match {
        case found(Handler, parameters: [String: String])
        case methodNotAllowed([String])
        case notFound
    }

    var literals: [Substring: RouteNode] = [:]
    var parameterName: String?
    var parameterChild: RouteNode?
    var handlers: [String: Handler] = [:]

    static func segments(of path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    func insert(_ segments: ArraySlice<Substring>, method: String, template: String, responder: @escaping Responder) {
        guard let head = segments.first else {
            precondition(handlers[method] == nil, "duplicate route \(method) \(template)")
            handlers[method] = Handler(template: template, responder: responder, immediate: nil)
            return
        }
        if head.hasPrefix("{") && head.hasSuffix("}") {
            let name = String(head.dropFirst().dropLast())
            precondition(parameterName == nil || parameterName == name, "conflicting parameter names in \(template)")
            parameterName = name
            let child = parameterChild ?? RouteNode()
            parameterChild = child
            child.insert(segments.dropFirst(), method: method, template: template, responder: responder)
        } else {
            let child = literals[head] ?? RouteNode()
            literals[head] = child
            child.insert(segments.dropFirst(), method: method, template: template, responder: responder)
        }
    }

    /// Attaches an immediate handler to an existing route.
    func attach(_ segments: ArraySlice<Substring>, method: String, immediate: @escaping ImmediateHandler) -> Bool {
        guard let head = segments.first else {
            guard handlers[method] != nil else { return false }
            handlers[method]!.immediate = immediate
            return true
        }
        if head.hasPrefix("{") && head.hasSuffix("}") {
            return parameterChild?.attach(segments.dropFirst(), method: method, immediate: immediate) ?? false
        }
        return literals[head]?.attach(segments.dropFirst(), method: method, immediate: immediate) ?? false
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
