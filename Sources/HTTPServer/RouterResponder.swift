/// A router's routes and middleware, built once and immutable: what a server runs for every request.
///
/// Requests are matched against a trie of immutable nodes; the middleware chain around the matched route (and its
/// synchronous form around immediate handlers) was composed when the responder was built, not per request.
public struct RouterResponder: Sendable {
    private let trie: RouteNode
    private let chain: Responder
    /// All the middleware, when every layer is surrounding middleware: then a request goes from ``respond(to:)``
    /// through them to its route's responder directly, without the closures of the general chain in between.
    private let surrounding: SurroundingLayers?
    /// The middleware around immediate handlers when some layer is not surrounding middleware (else `surrounding`).
    private let immediateChain: @Sendable (Request) -> Response?
    private let hasImmediateRoutes: Bool

    init(trie: RouteNode, middleware: [any Middleware], hasImmediateRoutes: Bool) {
        self.trie = trie
        self.hasImmediateRoutes = hasImmediateRoutes
        var chain: Responder = { request in
            guard let handler = request.matchedHandler else { return try await RouterResponder.noRoute(request) }
            return try await handler.responder(request)
        }
        var immediateChain: @Sendable (Request) -> Response? = { request in
            request.matchedHandler?.immediate?(request)
        }
        // Consecutive surrounding layers run as one async call; other middleware gets a call of its own.
        var run: [any SurroundingMiddleware] = [] // innermost first
        func closeRun() {
            guard !run.isEmpty else { return }
            let layers = SurroundingLayers(run.reversed()), next = chain
            chain = { request in try await layers.respond(to: request, next: next) }
            run = []
        }
        for layer in middleware.reversed() {
            let immediateNext = immediateChain
            immediateChain = { request in layer.respondImmediately(to: request, next: immediateNext) }
            if let surrounding = layer as? any SurroundingMiddleware {
                run.append(surrounding)
            } else {
                closeRun()
                let next = chain
                chain = { request in try await layer.respond(to: request, next: next) }
            }
        }
        // A run is closed at each plain layer: one still holding every layer means there was none.
        surrounding = run.count == middleware.count ? SurroundingLayers(run.reversed()) : nil
        closeRun()
        self.chain = chain
        self.immediateChain = immediateChain
    }

    /// What a request without a route gets.
    private static let noRoute: Responder = { request in throw Problem.notFound("No route for \(request.path).") }

    /// Answers the request on the calling thread when its route has an immediate handler that knows the answer, through
    /// the synchronous form of the middleware. When there is no immediate answer, the route match stays in `request`,
    /// so ``respond(to:)`` does not route it again.
    public func respondImmediately(to request: inout Request) -> Response? {
        guard hasImmediateRoutes, request.method == "GET" || request.method == "HEAD",
              case .found(let handler, let parameters) = trie.match(method: request.method, path: request.path)
        else { return nil }
        request.route = handler.template
        request.parameters = parameters
        request.matchedHandler = handler
        guard let immediate = handler.immediate else { return nil }
        guard let surrounding else { return immediateChain(request) }
        return surrounding.respondImmediately(to: &request, next: immediate)
    }

    /// Routes the request (unless ``respondImmediately(to:)`` already did) and runs it through the middleware chain.
    public func respond(to request: Request) async throws -> Response {
        let request = request.matchedHandler != nil ? request : routed(request)
        guard let surrounding else { return try await chain(request) }
        // Not `??`: a closure through a generic function comes back wrapped in conversion thunks, each an async frame.
        let next: Responder
        if let handler = request.matchedHandler { next = handler.responder } else { next = RouterResponder.noRoute }
        return try await surrounding.respond(to: request, next: next)
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
