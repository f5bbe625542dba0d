import Foundation
import HTTPServer

/// Authenticates requests, enforces who may call a route, and rate-limits per principal.
///
/// Wrap each protected route's handler with `require(_:_:)`; the handler receives the principal and must scope
/// everything it touches to `principal.tenantID`.
public struct AccessGuard: Sendable {
    private let tokens: TokenStore
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
            let principal = try await authenticate(request, accepted: accepted)
            var request = request
            request.principal = principal
            let decision = try admit(principal)
            var response = try await handler(request, principal)
            stamp(&response, with: decision)
            return response
        }
    }

    /// The synchronous twin of `require` for an `ImmediateHandler`: answers only when the caller's token is
    /// already verified in memory and `handler` knows the answer; otherwise nil, and the async route runs
    /// (which also produces every authentication error).
    public func requireImmediately(_ accepted: Callers,
                                   _ handler: @escaping @Sendable (Request, Principal) -> Response?) -> ImmediateHandler {
        { [self] request in
            guard let token = try? AccessGuard.bearerToken(request), let kind = SecretToken.kind(of: token),
                  case .valid(let principal)? = tokens.cachedRecord(for: token),
                  (try? check(principal, kind: kind, accepted: accepted)) != nil else { return nil }
            // The principal goes to the handler directly: no attribute box on the hottest path.
            guard var response = handler(request, principal) else { return nil }
            do throws(Problem) {
                stamp(&response, with: try admit(principal))
                return response
            } catch {
                return error.response(requestID: request.id)
            }
        }
    }

    /// Takes one request from the principal's allowance: the decision whose headers its answer carries (nil when
    /// rate limiting is off), or the 429 to answer instead.
    private func admit(_ principal: Principal) throws(Problem) -> RateLimiter.Decision? {
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

    /// Whether a known principal, presented as a `kind` secret, may call a route accepting `accepted`.
    private func check(_ principal: Principal, kind: SecretToken.Kind, accepted: Callers) throws {
        if kind == .apiKey && !accepted.contains(.apiKey) { throw AuthError.wrongKind(expected: "a session token") }
        if kind == .session && accepted.isDisjoint(with: .session) { throw AuthError.wrongKind(expected: "an API key") }
        if let expiresAt = principal.expiresAt, expiresAt <= Date() { throw AuthError.expired }
        if let role = principal.role {
            let needed: Callers = role == .agent ? .agent : .customer
            guard accepted.contains(needed) else {
                throw AuthError.forbidden("The \(role.rawValue) role may not do this.")
            }
        }
    }

    /// The principal behind the request's bearer token, if `accepted` lets it in.
    public func authenticate(_ request: Request, accepted: Callers) async throws -> Principal {
        let token = try AccessGuard.bearerToken(request)
        guard let kind = SecretToken.kind(of: token) else { throw AuthError.unknown }
        if kind == .apiKey && !accepted.contains(.apiKey) { throw AuthError.wrongKind(expected: "a session token") }
        if kind == .session && accepted.isDisjoint(with: .session) { throw AuthError.wrongKind(expected: "an API key") }
        let principal: Principal
        switch try await tokens.record(for: token) {
        case .unknown: throw AuthError.unknown
        case .revoked: throw AuthError.revoked
        case .valid(let found): principal = found
        }
        try check(principal, kind: kind, accepted: accepted)
        return principal
    }

    /// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, spaces trimmed).
    public static func bearerToken(_ request: Request) throws -> String {
        guard let header = request.headers["Authorization"] else { throw AuthError.missing }
        let bytes = header.utf8
        var index = bytes.startIndex
        func skipSpaces() { while index != bytes.endIndex && bytes[index] == 32 { index = bytes.index(after: index) } }
        skipSpaces()
        for expected in "bearer".utf8 {
            guard index != bytes.endIndex, bytes[index] | 0x20 == expected else { throw AuthError.malformed }
            index = bytes.index(after: index)
        }
        guard index != bytes.endIndex, bytes[index] == 32 else { throw AuthError.malformed }
        skipSpaces()
        var end = bytes.endIndex
        while end != index, bytes[bytes.index(before: end)] == 32 { end = bytes.index(before: end) }
        guard index != end else { throw AuthError.malformed }
        return String(header[index ..< end])
    }
}
