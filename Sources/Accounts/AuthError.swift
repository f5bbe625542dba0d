import HTTPServer

/// Why a request was not let through: 401 (who are you?) or 403 (not allowed), as RFC 6750 describes.
public enum AuthError: Error, ProblemConvertible, Equatable {
    /// No `Authorization` header.
    case missing
    /// An `Authorization` header that is not `Bearer <token>`.
    case malformed
    /// A token the service does not know.
    case unknown
    /// A session past its expiry.
    case expired
    /// A revoked key or session.
    case revoked
    /// A valid secret of the wrong kind here (an API key where a session is required, or the reverse).
    case wrongKind(expected: String)
    /// An authenticated caller whose role may not do this.
    case forbidden(String)

    static let realm = #"Bearer realm="switchboard""#

    /// The 401 or 403 problem for this error; a 401 carries an RFC 6750 `WWW-Authenticate` challenge.
    public var problem: Problem {
        switch self {
        case .missing:
            return unauthorized("An Authorization: Bearer header is required.", challenge: AuthError.realm)
        case .malformed:
            return unauthorized("The Authorization header must be 'Bearer <token>'.",
                                challenge: AuthError.realm + #", error="invalid_request""#)
        case .unknown:
            return invalidToken("The token is not valid.")
        case .expired:
            return invalidToken("The token has expired.")
        case .revoked:
            return invalidToken("The token has been revoked.")
        case .wrongKind(let expected):
            return invalidToken("This endpoint requires \(expected).")
        case .forbidden(let detail):
            return Problem(status: 403, title: "Forbidden", detail: detail)
        }
    }

    private func invalidToken(_ detail: String) -> Problem {
        unauthorized(detail, challenge: AuthError.realm + #", error="invalid_token", error_description=""# + detail + #"""#)
    }

    private func unauthorized(_ detail: String, challenge: String) -> Problem {
        Problem(status: 401, title: "Unauthorized", detail: detail, headers: ["WWW-Authenticate": challenge])
    }
}
