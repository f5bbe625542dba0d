import Foundation

/// Turns a request into a response: a handler for a request.
public typealias Responder = @Sendable (Request) async throws -> Response

/// Answers a request synchronously on the libmicrohttpd thread, or returns nil to let the async responder run.
///
/// Must never block or wait: only answers that are already known (a cached page, say) belong here.
public typealias ImmediateHandler = @Sendable (Request) -> Response?

/// The server's first try at a request without a body, on the libmicrohttpd thread: an answer, or nil to run the
/// async responder — with the request as this left it (a router stores its route match there, so it routes once).
public typealias ImmediateResponder = @Sendable (inout Request) -> Response?

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

    /// Adds middleware; the first added is the outermost.
    public mutating func use(_ middleware: any Middleware) {
        self.middleware.append(middleware)
    }

    /// Registers `responder` for `method` on `template`. Segments in braces capture a parameter.
    public mutating func on(_ method: String, _ template: String, _ responder: @escaping Responder) {
        let method = method.uppercased()
        precondition(!registrations.contains { $0.method == method && $0.handler.template == template },
                     "duplicate route \(method) \(template)")
        registrations.append(RouteRegistration(method: method, handler: RouteHandler(template: template, responder: responder)))
    }

    /// Shorthand for `on("GET", …)`.
    public mutating func get(_ template: String, _ responder: @escaping Responder) { on("GET", template, responder) }
    /// Shorthand for `on("POST", …)`.
    public mutating func post(_ template: String, _ responder: @escaping Responder) { on("POST", template, responder) }
    /// Shorthand for `on("PATCH", …)`.
    public mutating func patch(_ template: String, _ responder: @escaping Responder) { on("PATCH", template, responder) }
    /// Shorthand for `on("DELETE", …)`.
    public mutating func delete(_ template: String, _ responder: @escaping Responder) { on("DELETE", template, responder) }

    /// Adds a synchronous fast path to an already registered route: tried first, on the server's own thread, through
    /// the synchronous form of the same middleware.
    public mutating func immediate(_ method: String, _ template: String, _ handler: @escaping ImmediateHandler) {
        let method = method.uppercased()
        guard let index = registrations.firstIndex(where: { $0.method == method && $0.handler.template == template })
        else { preconditionFailure("register \(method) \(template) before its immediate handler") }
        let registered = registrations[index].handler
        registrations[index].handler = RouteHandler(template: registered.template, responder: registered.responder,
                                                    immediate: handler)
    }

    /// The routes and middleware as one immutable responder: the trie and both middleware chains built once.
    public func buildResponder() -> RouterResponder {
        RouterResponder(trie: RouteNode.build(registrations), middleware: middleware,
                        hasImmediateRoutes: registrations.contains { $0.handler.immediate != nil })
    }
}

/// One route as registered: its method and handler.
struct RouteRegistration: Sendable {
    let method: String
    var handler: RouteHandler
}

/// What a route runs: its template, its responder, and its optional immediate handler.
///
/// A class, so a request carries its match as one reference (copied with the request through every layer) rather than
/// a string and two closures; immutable, so a built responder never sees a later registration.
final class RouteHandler: Sendable {
    let template: String
    let responder: Responder
    let immediate: ImmediateHandler?

    init(template: String, responder: @escaping Responder, immediate: ImmediateHandler? = nil) {
        self.template = template
        self.responder = responder
        self.immediate = immediate
    }
}

/// Code that wraps every request: it may change the request, short-circuit, or change the response.
public protocol Middleware: Sendable {
    /// Handles `request`, usually by calling `next` once.
    func respond(to request: Request, next: Responder) async throws -> Response

    /// The same middleware for an answer known at once, on the server's thread (an immediate handler's): handles
    /// `request`, usually by calling `next` once. `next` returning nil means there is no immediate answer and the
    /// async chain will run: return nil then, and have no effect that the async form would repeat. By default it
    /// passes the request through.
    func respondImmediately(to request: Request, next: (Request) -> Response?) -> Response?
}

extension Middleware {
    public func respondImmediately(to request: Request, next: (Request) -> Response?) -> Response? {
        next(request)
    }
}
