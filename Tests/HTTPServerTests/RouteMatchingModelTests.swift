import TestSupport
import Testing
@testable import HTTPServer

/// The routing trie, walked over the path in place, against a plain reference: split the path into its non-empty
/// segments; among the routes that fit and serve the method, prefer a literal segment over a parameter at the first
/// place they differ (falling back to the parameter when nothing under the literal serves the request); when only
/// other methods fit, 405 with the methods of the first place that has any. Seeded random routes and paths, with
/// doubled and trailing slashes, empty paths and multi-byte segments.
@Suite(.timeLimit(.minutes(5)))
struct RouteMatchingModelTests {
    static let words = ["a", "b", "feeds", "é", "😀", "x%2Fy", "items"]

    struct Route {
        let segments: [Substring]
        let method: String
    }

    /// What `accept` makes of the routes ending at the first place the path leads to that it takes, with parameters.
    static func reference<Found>(_ routes: [Route], _ path: [Substring],
                                 _ accept: ([Route]) -> Found?) -> (Found, [String: String])? {
        func walk(_ candidates: [Route], _ depth: Int) -> (Found, [String: String])? {
            if depth == path.count {
                return accept(candidates.filter { $0.segments.count == depth }).map { ($0, [:]) }
            }
            let deeper = candidates.filter { $0.segments.count > depth }
            let literal = deeper.filter { $0.segments[depth] == path[depth] }
            if !literal.isEmpty, let found = walk(literal, depth + 1) { return found }
            let parameter = deeper.filter { $0.segments[depth].hasPrefix("{") }
            if !parameter.isEmpty, var found = walk(parameter, depth + 1) {
                found.1[String(parameter[0].segments[depth].dropFirst().dropLast())] = String(path[depth])
                return found
            }
            return nil
        }
        return walk(routes, 0)
    }

    @Test(arguments: [UInt64(2), 19, 77])
    func theTrieMatchesWhatTheReferenceMatches(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // One parameter name per depth, so that routes sharing a place agree on its name.
        var registered: [String: (template: String, method: String)] = [:]
        for _ in 0 ..< 14 {
            let depth = Int.random(in: 0 ... 4, using: &random)
            let segments = (0 ..< depth).map { level in
                Int.random(in: 0 ... 2, using: &random) == 0 ? "{p\(level)}" : Self.words.randomElement(using: &random)!
            }
            let template = "/" + segments.joined(separator: "/")
            let method = ["GET", "POST"].randomElement(using: &random)!
            registered["\(method) \(template)"] = (template, method)
        }
        let list = Array(registered.values)
        let trie = RouteNode.build(list.map { route in
            RouteRegistration(method: route.method,
                              handler: RouteHandler(template: route.template, responder: { _ in Response(status: 200) }))
        })
        let routes = list.map { Route(segments: RouteNode.segments(of: $0.template), method: $0.method) }
        for _ in 0 ..< 400 {
            var path = ""
            for _ in 0 ..< Int.random(in: 0 ... 5, using: &random) {
                path += String(repeating: "/", count: Int.random(in: 1 ... 2, using: &random))
                path += Self.words.randomElement(using: &random)!
            }
            if Bool.random(using: &random) { path += "/" }
            let method = ["GET", "POST", "HEAD"].randomElement(using: &random)!
            let segments = RouteNode.segments(of: path)
            let serving = { (here: [Route]) -> String? in
                here.first { $0.method == method || (method == "HEAD" && $0.method == "GET") }
                    .map { "/" + $0.segments.joined(separator: "/") }
            }
            let allowing = { (here: [Route]) -> [String]? in
                guard !here.isEmpty else { return nil }
                let methods = Set(here.map(\.method))
                return methods.union(methods.contains("GET") ? ["HEAD"] : []).sorted()
            }
            let context = "seed \(seed): \(method) \(path)"
            switch trie.match(method: method, path: path) {
            case .found(let handler, let parameters):
                let expected = Self.reference(routes, segments, serving)
                #expect(expected?.0 == handler.template, "\(context)")
                #expect(expected?.1 == Dictionary(uniqueKeysWithValues: parameters.map { ($0.name, $0.value) }), "\(context)")
            case .methodNotAllowed(let allowed):
                #expect(Self.reference(routes, segments, serving) == nil, "\(context)")
                #expect(Self.reference(routes, segments, allowing)?.0 == allowed, "\(context)")
            case .notFound:
                #expect(Self.reference(routes, segments, serving) == nil, "\(context)")
                #expect(Self.reference(routes, segments, allowing) == nil, "\(context)")
            }
        }
    }
}
