/// A router's routes and middleware, built once and immutable: what a server runs for every request.
///
/// Requests are matched against a trie of immutable nodes. A request is answered one of two ways, through the same
/// middleware run once: from memory on the server's thread (``answerFromMemory(_:)``, for a route with a
/// ``MemoryAnswer`` that knows the answer), or by the route's responder in the request's task (``respond(to:)``).
public struct RouterResponder: Sendable {
    private let trie: RouteNode
    private let middleware: MiddlewareStack
    private let answersFromMemory: Bool
    private let streamsBodies: Bool

    init(trie: RouteNode, middleware: MiddlewareStack, answersFromMemory: Bool, streamsBodies: Bool = false) {
        self.trie = trie
        self.middleware = middleware
        self.answersFromMemory = answersFromMemory
        self.streamsBodies = streamsBodies
    }

    /// What a request without a route gets.
    private static let noRoute: Responder = { request in throw Problem.notFound("No route for \(request.path).") }

    /// The answer from memory, through the middleware, when the request's route has one that knows it; the server's
    /// first try at a request without a body, on its own thread.
    ///
    /// Returns nil when there is none; the request then keeps its route match, and, if the middleware was prepared
    /// for a memory answer that declined, that preparation and whatever the memory answer left in it, for
    /// ``respond(to:)`` to go on from (nothing is done twice).
    public func answerFromMemory(_ request: inout Request) -> Response? {
        guard answersFromMemory, request.method == "GET" || request.method == "HEAD",
              case .found(let handler, let parameters) = trie.match(method: request.method, path: request.path)
        else { return nil }
        request.route = handler.template
        request.parameters = parameters
        request.matchedHandler = handler
        guard let fromMemory = handler.fromMemory else { return nil }
        return middleware.answer(&request, next: fromMemory)
    }

    /// Whether the request's route reads its body as it arrives (see ``Route/streamsBody``); called by the server on
    /// a request's head, before any body is read. The request keeps its route match, so it is not matched again.
    public func streamsBody(_ request: inout Request) -> Bool {
        guard streamsBodies, request.method != "GET", request.method != "HEAD",
              case .found(let handler, let parameters) = trie.match(method: request.method, path: request.path)
        else { return false }
        request.route = handler.template
        request.parameters = parameters
        request.matchedHandler = handler
        return handler.streamsBody
    }

    /// Routes the request (unless ``answerFromMemory(_:)`` already did) and answers it through the middleware and the
    /// route's responder, going on from where a declined memory answer left the request.
    public func respond(to request: Request) async throws -> Response {
        // Not `??`: a closure through a generic function comes back wrapped in conversion thunks, each an async frame.
        // Not a conditional expression choosing the request either: that is one more copy of it.
        if let handler = request.matchedHandler {
            return try await middleware.respond(to: request, next: handler.responder)
        }
        let routed = routed(request)
        let next: Responder
        if let handler = routed.matchedHandler { next = handler.responder } else { next = RouterResponder.noRoute }
        return try await middleware.respond(to: routed, next: next)
    }

    /// The request with its route matched (kept out of line: the async caller's frame stays small).
    @inline(never)
    private func routed(_ request: Request) -> Request {
        var request = request
        switch trie.match(method: request.method, path: request.path) {
        case .found(let handler, let parameters):
            request.route = handler.template
            request.parameters = parameters
            request.matchedHandler = handler
        case .methodNotAllowed(let allowed):
            let allow = allowed.joined(separator: ", ")
            request.matchedHandler = RouteHandler(template: "", responder: { request in
                throw Problem(status: 405, title: "Method Not Allowed",
                              detail: "\(request.method) is not allowed here; use \(allow).", headers: ["Allow": allow])
            })
        case .notFound:
            break
        }
        return request
    }
}
