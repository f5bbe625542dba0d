import Foundation
import HTTPServer

/// How far authenticating a request got without waiting: its principal, or its token still to be looked up.
enum Authentication: Sendable {
    /// The token's record was in memory: the principal, checked against the route's callers.
    case known(Principal)
    /// The token is well formed and of an accepted kind, but its record must be looked up.
    case toLookUp(token: String, kind: SecretToken.Kind)
}

/// The request attribute that carries a declined memory answer's authentication to the route's async handler.
enum AuthenticationKey: RequestAttributeKey {
    typealias Value = Authentication
}

extension Request {
    /// The authentication a declined memory answer got as far as, for the async handler to go on from.
    var authentication: Authentication? {
        get { attributes[AuthenticationKey.self] }
        set { attributes[AuthenticationKey.self] = newValue }
    }
}

extension AccessGuard {
    /// The principal behind the request's bearer token, if `accepted` lets it in.
    public func authenticate(_ request: Request, accepted: Callers) async throws -> Principal {
        try await principal(authenticateFromMemory(request, accepted: accepted), accepted: accepted)
    }

    /// Authentication as far as it goes without waiting: every error that needs no lookup is thrown here, and the
    /// principal is known when the token's record is in memory.
    func authenticateFromMemory(_ request: Request, accepted: Callers) throws -> Authentication {
        guard let header = request.headers.value(.authorization) else { throw AuthError.missing }
        guard let bytes = header.withBytes(AccessGuard.bearerTokenBytes(in:)) else { throw AuthError.malformed }
        // Looked up where it lies in the header first: the cache holds well-formed secrets only, so for one found
        // there the kind its prefix names is its kind, and the rest of its shape need not be checked again.
        let key = TokenKey(in: header, bytes: bytes)
        if let kind = key.withBytes(SecretToken.kind(byPrefixOf:)), let record = tokens.cachedRecord(for: key) {
            try AccessGuard.check(kind, accepted: accepted)
            return .known(try principal(of: record, kind: kind, accepted: accepted))
        }
        let token = key.token
        guard let kind = SecretToken.kind(of: token) else { throw AuthError.unknown }
        try AccessGuard.check(kind, accepted: accepted)
        return .toLookUp(token: token, kind: kind)
    }

    /// Refuses a secret of a kind the route does not take.
    private static func check(_ kind: SecretToken.Kind, accepted: Callers) throws {
        if kind == .apiKey && !accepted.contains(.apiKey) { throw AuthError.wrongKind(expected: "a session token") }
        if kind == .session && accepted.isDisjoint(with: .session) { throw AuthError.wrongKind(expected: "an API key") }
    }

    /// The principal of `authentication`, looking its token up when it was not in memory.
    func principal(_ authentication: Authentication, accepted: Callers) async throws -> Principal {
        switch authentication {
        case .known(let principal):
            return principal
        case .toLookUp(let token, let kind):
            return try principal(of: try await tokens.record(for: token), kind: kind, accepted: accepted)
        }
    }

    /// The principal of a token's record, if `accepted` lets it in.
    private func principal(of record: TokenRecord, kind: SecretToken.Kind, accepted: Callers) throws -> Principal {
        switch record {
        case .unknown: throw AuthError.unknown
        case .revoked: throw AuthError.revoked
        case .valid(let principal):
            try check(principal, kind: kind, accepted: accepted)
            return principal
        }
    }

    /// Whether a known principal, presented as a `kind` secret, may call a route accepting `accepted`.
    private func check(_ principal: Principal, kind: SecretToken.Kind, accepted: Callers) throws {
        try AccessGuard.check(kind, accepted: accepted)
        if let expiresAt = principal.expiresAt, expiresAt <= Date() { throw AuthError.expired }
        if let role = principal.role {
            let needed: Callers = role == .agent ? .agent : .customer
            guard accepted.contains(needed) else {
                throw AuthError.forbidden("The \(role.rawValue) role may not do this.")
            }
        }
    }

    /// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, spaces trimmed).
    public static func bearerToken(_ request: Request) throws -> String {
        guard let header = request.headers.value(.authorization) else { throw AuthError.missing }
        guard let bytes = header.withBytes(bearerTokenBytes(in:)) else { throw AuthError.malformed }
        return TokenKey.secret(at: bytes, in: header)
    }

    /// Where the token lies in an `Authorization` header's value, `Bearer <token>`, given as bytes; nil when the value
    /// has another shape. Over the bytes in place, by offset (every request but the probes presents one).
    static func bearerTokenBytes(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var index = 0, end = bytes.count
        while index < end && bytes[index] == 32 { index += 1 }
        for expected in "bearer".utf8 {
            guard index < end, bytes[index] | 0x20 == expected else { return nil }
            index += 1
        }
        guard index < end, bytes[index] == 32 else { return nil }
        while index < end && bytes[index] == 32 { index += 1 }
        while end > index && bytes[end - 1] == 32 { end -= 1 }
        guard index < end else { return nil }
        return index ..< end
    }
}
