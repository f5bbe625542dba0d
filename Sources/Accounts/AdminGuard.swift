import HTTPServer

/// Lets through only requests bearing one fixed operator token: the admin API's (`SWITCHBOARD_ADMIN_TOKEN`), the
/// metrics scraper's (`METRICS_TOKEN`). Compared in constant time; anything else is 401.
public struct AdminGuard: Sendable {
    let token: String

    /// A guard for `token`.
    public init(token: String) { self.token = token }

    /// `handler`, reached only with `Authorization: Bearer <token>`.
    public func require(_ handler: @escaping Responder) -> Responder {
        { [token] request in
            let presented = try AccessGuard.bearerToken(request)
            guard AdminGuard.constantTimeEquals(Array(presented.utf8), Array(token.utf8)) else { throw AuthError.unknown }
            return try await handler(request)
        }
    }

    /// Compares without an early exit, so timing does not reveal how much of a guess was right.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0 ..< max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
