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

/// Routes requests by method and path template (`/v1/feeds/{key}`) to responders, through a middleware chain.
///
/// Register every route before the server starts; the router is immutable once it serves.
/// A `GET` route also answers `HEAD`. Unknown paths → 404; a known path with another method → 405 with `Allow`.
public struct Router: Sendable {
    private let root = RouteNode()
    private var middleware: [any Middleware] = []
    private(set) public var routes: [(method: String, template: String)] = []
    private var hasImmediateRoutes = false
    /// Told of every request answered by an immediate handler (the async path logs through middleware).
    public var immediateAccessLog: (@Sendable (AccessLogEntry) -> Void)?

    /// An empty router.
    public init() {}

    /// Adds middleware; the first added is the outermost.
    public mutating func use(_ middleware: any Middleware) {
        self.middleware.append(middleware)
    }

    /// Registers `responder` for `method` on `template`. Segments in braces capture a parameter.
    public mutating func on(_ method: String, _ template: String, _ responder: @escaping Responder) {
        let segments = RouteNode.segments(of: template)
        root.insert(segments[...], method: method.uppercased(), template: template, responder: responder)
        routes.append((method: method.uppercased(), template: template))
    }

    /// Shorthand for `on("GET", …)`.
    public mutating func get(_ template: String, _ responder: @escaping Responder) { on("GET", template, responder) }
    /// Shorthand for `on("POST", …)`.
    public mutating func post(_ template: String, _ responder: @escaping Responder) { on("POST", template, responder) }
    /// Shorthand for `on("PATCH", …)`.
    public mutating func patch(_ template: String, _ responder: @escaping Responder) { on("PATCH", template, responder) }
    /// Shorthand for `on("DELETE", …)`.
    public mutating func delete(_ template: String, _ responder: @escaping Responder) { on("DELETE", template, responder) }

    /// Adds a synchronous fast path to an already registered route: tried first, on the server's own thread.
    public mutating func immediate(_ method: String, _ template: String, _ handler: @escaping ImmediateHandler) {
        let attached = root.attach(RouteNode.segments(of: template)[...], method: method.uppercased(), immediate: handler)
        precondition(attached, "register \(method) \(template) before its immediate handler")
        hasImmediateRoutes = true
    }

    /// Answers the request on the calling thread when its route has an immediate handler that knows the answer.
    /// The request gets its id and the response its `X-Request-ID`, as on the async path. When there is no
    /// immediate answer, the route match stays in `request`, so ``respond(to:)`` does not route it again.
    public func respondImmediately(to request: inout Request) -> Response? {
        guard hasImmediateRoutes, request.method == "GET" || request.method == "HEAD",
              case .found(let handler, let parameters) = root.match(method: request.method, path: request.path)
        else { return nil }
        request.route = handler.template
        request.parameters = parameters
        request.matchedHandler = handler
        guard let immediate = handler.immediate else { return nil }
        let start = ContinuousClock.now
        var request = request
        request.id = RequestIDMiddleware.id(for: request)
        guard var response = immediate(request) else { return nil }
        response.headers.set("X-Request-ID", request.id)
        if let log = immediateAccessLog {
            let elapsed = ContinuousClock.now - start
            log(AccessLogEntry(time: Date(), requestID: request.id, method: request.method, route: request.route,
                               status: response.status,
                               duration: Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)))
        }
        return response
    }

    /// Routes the request and runs it through the middleware chain.
    public func respond(to request: Request) async throws -> Response {
        var request = request
        let terminal: Responder
        if let handler = request.matchedHandler {
            return try await Router.run(middleware[...], request, handler.responder)
        }
        switch root.match(method: request.method, path: request.path) {
        case .found(let handler, let parameters):
            request.route = handler.template
            request.parameters = parameters
            terminal = handler.responder
        case .methodNotAllowed(let allowed):
            let allow = allowed.joined(separator: ", ")
            terminal = { request in
                throw Problem(status: 405, title: "Method Not Allowed",
                              detail: "\(request.method) is not allowed here; use \(allow).", headers: ["Allow": allow])
            }
        case .notFound:
            terminal = { request in throw Problem.notFound("No route for \(request.path).") }
        }
        return try await Router.run(middleware[...], request, terminal)
    }

    private static func run(_ chain: ArraySlice<any Middleware>, _ request: Request,
                            _ terminal: @escaping Responder) async throws -> Response {
        guard let first = chain.first else { return try await terminal(request) }
        let rest = chain.dropFirst()
        return try await first.respond(to: request) { request in
            try await Router.run(rest, request, terminal)
        }
    }
}

/// Code that wraps every request: it may change the request, short-circuit, or change the response.
public protocol Middleware: Sendable {
    /// Handles `request`, usually by calling `next` once.
    func respond(to request: Request, next: Responder) async throws -> Response
}
