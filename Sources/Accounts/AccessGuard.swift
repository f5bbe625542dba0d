import HTTPServer

/// Authenticates requests, enforces who may call a route, and rate-limits per principal.
///
/// Wrap each protected route's handler with `require(_:_:)`; the handler receives the principal and must scope
/// everything it touches to `principal.tenantID`. A request is authenticated once and takes one request from its
/// principal's allowance, also when a route's answer from memory declines and its async handler answers instead.
public struct AccessGuard: Sendable {
    let tokens: TokenStore
    private let limiter: RateLimiter?

    /// A guard using `tokens`, and `limiter` when rate limiting is on.
    public init(tokens: TokenStore, limiter: RateLimiter?) {
        self.tokens = tokens
        self.limiter = limiter
    }

    /// A responder that lets through only `accepted` callers, then runs `handler` with the principal.
    public func require(_ accepted: Callers,
                        _ handler: @escaping @Sendable (Request, Principal) async throws -> Response) -> Responder {
        { [self] request in
            // After a declined answer from memory, authentication goes on from where that left it.
            let principal = try await principal(request.authentication ?? authenticateFromMemory(request, accepted: accepted),
                                                accepted: accepted)
            let decision = try admit(principal)
            var response = try await handler(request, principal)
            stamp(&response, with: decision)
            return response
        }
    }

    /// `require(accepted, handler)` with an answer from memory tried first: `fromMemory` runs when the caller's token
    /// is already verified in memory, and its answer takes one request from the allowance. When the token must be
    /// looked up, or `fromMemory` has no answer, `handler` answers, going on from the authentication done so far.
    public func require(_ accepted: Callers,
                        _ handler: @escaping @Sendable (Request, Principal) async throws -> Response,
                        fromMemory: @escaping @Sendable (Request, Principal) -> Response?) -> Route {
        Route(fromMemory: { [self] request in
            let authentication = try authenticateFromMemory(request, accepted: accepted)
            // The principal goes to the handler directly: no attribute box when the answer is in memory.
            guard case .known(let principal) = authentication, var response = fromMemory(request, principal) else {
                request.authentication = authentication
                return nil
            }
            stamp(&response, with: try admit(principal))
            return response
        }, require(accepted, handler))
    }

    /// Takes one request from the principal's allowance: the decision whose headers its answer carries (nil when
    /// rate limiting is off), or the 429 to answer instead. Out of line and untyped, so the 429 is boxed as it is
    /// thrown: a typed error is returned through a slot in the caller's frame, which every guarded request's task
    /// holds while it waits.
    @inline(never)
    private func admit(_ principal: Principal) throws -> RateLimiter.Decision? {
        guard let limiter else { return nil }
        let decision = limiter.take(principal.identity)
        guard decision.allowed else { throw limited(decision, limiter) }
        return decision
    }

    /// Adds the rate-limit headers of `decision` to an answer.
    private func stamp(_ response: inout Response, with decision: RateLimiter.Decision?) {
        guard let limiter, let decision else { return }
        response.headers.set("RateLimit-Policy", limiter.policyHeader)
        response.headers.set("RateLimit", limiter.header(for: decision))
    }

    private func limited(_ decision: RateLimiter.Decision, _ limiter: RateLimiter) -> Problem {
        Problem(status: 429, title: "Too Many Requests",
                detail: "The rate limit of \(limiter.perMinute) requests a minute is reached.",
                headers: ["Retry-After": String(decision.retryAfterSeconds),
                          "RateLimit-Policy": limiter.policyHeader,
                          "RateLimit": limiter.header(for: decision)])
    }
}
