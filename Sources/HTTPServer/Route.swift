/// Turns a request into a response: a handler for a request.
public typealias Responder = @Sendable (Request) async throws -> Response

/// A route's answer when it is already in memory (a cached page, an event stream whose start is known, say), tried
/// first on the server's own thread for a `GET` or `HEAD` without a body; nil lets the route's async responder
/// answer instead.
///
/// Must never block or wait. When it returns nil, the responder receives the request as this left it, so work done
/// here (an authenticated principal, say) is carried on rather than done again; a throw is the request's answer,
/// mapped by the middleware as a responder's throw would be.
public typealias MemoryAnswer = @Sendable (inout Request) throws -> Response?

/// What a route runs: its async responder and, when it has one, its answer from memory.
public struct Route: Sendable {
    /// Answers every request the memory answer does not.
    public let responder: Responder
    /// Tried first, on the server's thread; see ``MemoryAnswer``.
    public let fromMemory: MemoryAnswer?
    /// Whether the responder reads the body as it arrives (``Request/bodyStream``) rather than after all of it: it
    /// then starts as soon as the head is in, and may answer (a 401, say) without the body ever being read.
    public let streamsBody: Bool

    /// A route answered by `responder`, after `fromMemory` when given; with `streamingBody`, the responder starts on
    /// the head and reads the body from ``Request/bodyStream`` (``Request/body`` stays empty).
    public init(fromMemory: MemoryAnswer? = nil, streamingBody: Bool = false, _ responder: @escaping Responder) {
        self.responder = responder
        self.fromMemory = fromMemory
        self.streamsBody = streamingBody
    }
}

/// A route as a built router holds it: its template and what it runs.
///
/// A class, so a request carries its match as one reference (copied with the request through every layer) rather than
/// a string and two closures; immutable, so a built responder never sees a later registration.
final class RouteHandler: Sendable {
    let template: String
    let responder: Responder
    let fromMemory: MemoryAnswer?
    let streamsBody: Bool

    init(template: String, responder: @escaping Responder, fromMemory: MemoryAnswer? = nil, streamsBody: Bool = false) {
        self.template = template
        self.responder = responder
        self.fromMemory = fromMemory
        self.streamsBody = streamsBody
    }
}
