/// Middleware whose work before and after the layers inside it never waits: it prepares the request, and it completes
/// the outcome (a response, or the error the layers inside threw).
///
/// A router runs a run of these that follow each other around the route as one async call (``SurroundingLayers``),
/// not one per layer: each async layer costs the request's task a frame of its own, and with a few layers those frames
/// outgrew the task's first block of memory, so every request paid for several more.
///
/// `complete` sees the request as the handler received it, with the changes of every `prepare` that ran.
public protocol SurroundingMiddleware: Middleware {
    /// Runs before the layers inside; may change the request. Throwing answers the request with that error: the
    /// layers inside do not run, and `complete` of this layer and of those outside it sees the error.
    func prepare(_ request: inout Request) throws

    /// Runs after the layers inside answered or threw; may change the outcome (map an error to a response, add a
    /// header, record what happened).
    func complete(_ request: Request, _ outcome: inout Result<Response, any Error>)
}

extension SurroundingMiddleware {
    /// Does nothing before the layers inside.
    public func prepare(_ request: inout Request) throws {}

    /// Leaves the outcome as it is.
    public func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {}

    /// The layer on its own: `prepare`, the layers inside, `complete`.
    public func respond(to request: Request, next: Responder) async throws -> Response {
        try await SurroundingLayers([self]).respond(to: request, next: next)
    }

    /// The layer on its own, for an answer known at once. When `next` has no answer, this returns nil before
    /// `complete`; an error still unmapped after `complete` becomes its problem response (as on the async path).
    public func respondImmediately(to request: Request, next: (Request) -> Response?) -> Response? {
        var request = request
        return SurroundingLayers([self]).respondImmediately(to: &request, next: next)
    }
}

/// Consecutive ``SurroundingMiddleware`` layers run as one: every `prepare` outermost first, the layers inside with a
/// single await, then `complete` innermost first, for the layers whose `prepare` ran.
///
/// The synchronous halves are kept out of line, so the one async frame holds little more than the request.
struct SurroundingLayers: Sendable {
    private let layers: [any SurroundingMiddleware]

    /// The layers, outermost first.
    init(_ layers: [any SurroundingMiddleware]) {
        self.layers = layers
    }

    func respond(to request: consuming Request, next: Responder) async throws -> Response {
        let (prepared, thrown) = prepare(&request)
        let outcome: Result<Response, any Error>
        if let thrown {
            outcome = .failure(thrown)
        } else {
            do { outcome = .success(try await next(request)) } catch { outcome = .failure(error) }
        }
        return try complete(request, prepared: prepared, outcome)
    }

    /// Runs the `prepare`s in order until one throws; returns how many ran (the one that threw included) and its error.
    @inline(never)
    private func prepare(_ request: inout Request) -> (prepared: Int, thrown: (any Error)?) {
        for index in layers.indices {
            do {
                try layers[index].prepare(&request)
            } catch {
                return (index + 1, error)
            }
        }
        return (layers.count, nil)
    }

    @inline(never)
    private func complete(_ request: Request, prepared: Int, _ outcome: consuming Result<Response, any Error>) throws -> Response {
        var outcome = outcome
        for index in layers.indices.prefix(prepared).reversed() {
            layers[index].complete(request, &outcome)
        }
        return try outcome.get()
    }

    /// The layers as one for an answer known at once, on the caller's request in place (no copy of it per layer):
    /// the `prepare`s, `next`, then the `complete`s. When `next` has no answer this returns nil before any `complete`,
    /// and the request keeps what the `prepare`s did to it, for the async path to run the same layers on (their
    /// `prepare`s must therefore give the same result when run again). An error still unmapped after the `complete`s
    /// becomes its problem response, as on the async path.
    func respondImmediately(to request: inout Request, next: (Request) -> Response?) -> Response? {
        let (prepared, thrown) = prepare(&request)
        let outcome: Result<Response, any Error>
        if let thrown {
            outcome = .failure(thrown)
        } else {
            guard let response = next(request) else { return nil }
            outcome = .success(response)
        }
        do {
            return try complete(request, prepared: prepared, consume outcome)
        } catch {
            return ErrorMiddleware.response(for: error, request: request)
        }
    }
}

extension Result where Success == Response, Failure == any Error {
    /// The response's status, or nil for an error, read in place: matching with a binding copies the response (its
    /// header list and body are references, and a cached body's count is shared by every thread that sends it).
    public var responseStatus: Int? {
        switch self {
        case .success(let response): response.status
        case .failure: nil
        }
    }

    /// Changes the response in place when there is one: moved out and back, so its header list and body are not
    /// copied on write.
    public mutating func updateResponse(_ change: (inout Response) -> Void) {
        switch consume self {
        case .success(var response):
            change(&response)
            self = .success(response)
        case .failure(let error):
            self = .failure(error)
        }
    }
}
