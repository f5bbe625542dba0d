/// Collects routes and middleware; ``buildResponder()`` turns them into the immutable ``RouterResponder`` a server
/// runs.
///
/// A `GET` route also answers `HEAD`. Unknown paths → 404; a known path with another method → 405 with `Allow`.
/// Registration is a plain value: nothing is shared with a responder built from it, so registering more routes
/// afterwards cannot change what a running server does.
public struct Router: Sendable {
    private var middleware: [any Middleware] = []
    private var registrations: [RouteRegistration] = []

    /// An empty router.
    public init() {}

    /// Every registered route, as (method, template), in registration order.
    public var routes: [(method: String, template: String)] {
        registrations.map { (method: $0.method, template: $0.handler.template) }
    }

    /// Adds middleware around every route; the first added is the outermost.
    public mutating func use(_ middleware: any Middleware) {
        self.middleware.append(middleware)
    }

    /// Registers `route` for `method` on `template`. Segments in braces capture a parameter.
    public mutating func on(_ method: String, _ template: String, _ route: Route) {
        let method = method.uppercased()
        precondition(!registrations.contains { $0.method == method && $0.handler.template == template },
                     "duplicate route \(method) \(template)")
        precondition(route.fromMemory == nil || method == "GET", "only GET routes answer from memory: \(method) \(template)")
        precondition(!route.streamsBody || method != "GET", "a GET route has no body to stream: \(template)")
        let handler = RouteHandler(template: template, responder: route.responder, fromMemory: route.fromMemory,
                                   streamsBody: route.streamsBody)
        registrations.append(RouteRegistration(method: method, handler: handler))
    }

    /// Registers `responder` for `method` on `template`, after `fromMemory` when given (see ``MemoryAnswer``).
    public mutating func on(_ method: String, _ template: String, fromMemory: MemoryAnswer? = nil,
                            _ responder: @escaping Responder) {
        on(method, template, Route(fromMemory: fromMemory, responder))
    }

    /// Shorthand for `on("GET", …)`.
    public mutating func get(_ template: String, _ route: Route) { on("GET", template, route) }
    /// Shorthand for `on("GET", …)`.
    public mutating func get(_ template: String, fromMemory: MemoryAnswer? = nil, _ responder: @escaping Responder) {
        on("GET", template, fromMemory: fromMemory, responder)
    }
    /// Shorthand for `on("POST", …)`; with `streamingBody`, see ``Route/init(fromMemory:streamingBody:_:)``.
    public mutating func post(_ template: String, streamingBody: Bool = false, _ responder: @escaping Responder) {
        on("POST", template, Route(streamingBody: streamingBody, responder))
    }
    /// Shorthand for `on("PATCH", …)`.
    public mutating func patch(_ template: String, _ responder: @escaping Responder) { on("PATCH", template, responder) }
    /// Shorthand for `on("DELETE", …)`.
    public mutating func delete(_ template: String, _ responder: @escaping Responder) { on("DELETE", template, responder) }

    /// The routes and middleware as one immutable responder: the trie and the middleware stack built once.
    public func buildResponder() -> RouterResponder {
        RouterResponder(trie: RouteNode.build(registrations), middleware: MiddlewareStack(middleware),
                        answersFromMemory: registrations.contains { $0.handler.fromMemory != nil },
                        streamsBodies: registrations.contains { $0.handler.streamsBody })
    }
}

/// One route as registered: its method and handler.
struct RouteRegistration: Sendable {
    let method: String
    let handler: RouteHandler
}
