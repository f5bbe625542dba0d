/// A router's middleware run as one: every `prepare` outermost first, the route, then `complete` innermost first, for
/// the layers whose `prepare` ran. The same code serves both ways a request is answered: ``answer(_:next:)`` on the
/// server's thread, ``respond(to:next:)`` in the request's task.
///
/// One async call for all the layers, not one per layer: each async layer would cost the request's task a frame of
/// its own, and with a few layers those frames outgrew the task's first block of memory. The synchronous halves are
/// kept out of line, so the one async frame holds little more than the request.
struct MiddlewareStack: Sendable {
    private let layers: [any Middleware]

    /// The layers, outermost first.
    init(_ layers: [any Middleware]) {
        self.layers = layers
    }

    /// The layers around `next`. A request that an answer from memory already prepared (``answer(_:next:)``
    /// returned nil) is not prepared again.
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

    /// The layers around an answer from memory, on the caller's request in place (no copy of it per layer): the
    /// `prepare`s, `next`, then the `complete`s. When `next` has no answer this returns nil before any `complete`, and
    /// the request keeps what the `prepare`s (and `next`) did to it, marked as prepared: ``respond(to:next:)`` goes on
    /// from there. An error still unmapped after the `complete`s becomes its problem response, as in the server's task.
    func answer(_ request: inout Request, next: MemoryAnswer) -> Response? {
        let (prepared, thrown) = prepare(&request)
        let outcome: Result<Response, any Error>
        if let thrown {
            outcome = .failure(thrown)
        } else {
            do {
                guard let response = try next(&request) else { return nil }
                outcome = .success(response)
            } catch {
                outcome = .failure(error)
            }
        }
        do {
            return try complete(request, prepared: prepared, consume outcome)
        } catch {
            return ErrorMiddleware.response(for: error, request: request)
        }
    }

    /// Runs the `prepare`s in order until one throws; returns how many ran (the one that threw included) and its
    /// error. A request already prepared counts as all of them having run.
    @inline(never)
    private func prepare(_ request: inout Request) -> (prepared: Int, thrown: (any Error)?) {
        guard !request.isPrepared else { return (layers.count, nil) }
        for index in layers.indices {
            do {
                try layers[index].prepare(&request)
            } catch {
                return (index + 1, error)
            }
        }
        request.isPrepared = true
        return (layers.count, nil)
    }

    @inline(never)
    private func complete(_ request: Request, prepared: Int, _ outcome: consuming Result<Response, any Error>) throws -> Response {
        var outcome = outcome
        for index in layers.indices.prefix(prepared).reversed() {
            layers[index].complete(request, &outcome)
        }
        // Taken apart, not `get()`: that copies the response out of the result, and then destroys the result.
        switch consume outcome {
        case .success(let response): return response
        case .failure(let error): throw error
        }
    }
}
