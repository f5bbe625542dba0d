import Accounts
import Foundation
import HTTPServer
import Postgres

/// The agent console: its files at `/console/` (`/console` redirects there), and the one-time links agents sign in
/// with — `POST /v1/console/links` (the tenant's backend) and `POST /v1/console/sessions` (the page, trading a
/// link's code for an agent session).
public struct ConsoleRoutes: Sendable {
    let links: ConsoleLinks
    let accounts: AccountStore
    let guardian: AccessGuard
    /// Where the service is reached from outside (`PUBLIC_URL`), for a link's URL; nil: links carry the path alone.
    let publicURL: String?
    /// The longest session a link may open (as `POST /v1/sessions` allows).
    let maxSessionTTL: Int
    private let files = ConsoleFiles()

    /// The routes; links and sessions through `pool` and `accounts`, guarded by `guardian`.
    public init(pool: PostgresPool, accounts: AccountStore, guardian: AccessGuard, publicURL: String?,
                maxSessionTTL: Int = 30 * 86_400) {
        links = ConsoleLinks(pool: pool)
        self.accounts = accounts
        self.guardian = guardian
        self.publicURL = publicURL
        self.maxSessionTTL = maxSessionTTL
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.get("/console", page)
        router.get("/console/{file}", page)
        router.post("/v1/console/links", guardian.require(.apiKey, mint))
        router.post("/v1/console/sessions", redeem)
    }

    /// The headers of every console file: the page talks to this origin alone, is never framed, and gives no
    /// referrer away (the URL holds a link's code until the page removes it).
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' blob:; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ]

    @Sendable func page(_ request: Request) async throws -> Response {
        let name = request.parameters["file"] ?? ""
        if name.isEmpty && !request.path.hasSuffix("/") {
            return Response(status: 308, headers: ["Location": "/console/", "Content-Length": "0"])
        }
        guard let file = files.files[name.isEmpty ? "index.html" : name] else { throw Problem.notFound("No such console file.") }
        var headers: HTTPHeaders = ["Content-Type": file.contentType, "ETag": file.etag, "Cache-Control": "no-cache"]
        for (field, value) in ConsoleRoutes.securityHeaders { headers.set(field, value) }
        if let tags = request.headers[.ifNoneMatch], EntityTag.list(tags, matches: file.etag) {
            return Response(status: 304, headers: headers)
        }
        return Response(status: 200, headers: headers, shared: file.bytes)
    }

    struct LinkBody: RequestBody {
        let agentID: String
        let ttlSeconds: Int?
        let sessionTTLSeconds: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case agentID = "agent_id", ttlSeconds = "ttl_seconds", sessionTTLSeconds = "session_ttl_seconds"
        }
    }

    struct LinkAnswer: Encodable {
        let url: String
        let expiresAt: Date
        enum CodingKeys: String, CodingKey { case url, expiresAt = "expires_at" }
    }

    @Sendable func mint(_ request: Request, _ principal: Principal) async throws -> Response {
        let body = try request.decodeJSON(LinkBody.self)
        try Problem.requireLength(body.agentID, of: "agent_id", in: 1 ... 200)
        let ttl = body.ttlSeconds ?? 300
        guard (1 ... ConsoleLinks.maximumTTL).contains(ttl) else {
            throw Problem.badRequest("ttl_seconds must be from 1 to \(ConsoleLinks.maximumTTL).", parameter: "ttl_seconds")
        }
        let sessionTTL = body.sessionTTLSeconds ?? 8 * 3600
        guard (60 ... maxSessionTTL).contains(sessionTTL) else {
            throw Problem.badRequest("session_ttl_seconds must be from 60 to \(maxSessionTTL).", parameter: "session_ttl_seconds")
        }
        var keyID: UUID?
        if case .apiKey(let id) = principal.credential { keyID = id }
        let minted = try await links.mint(tenant: principal.tenantID, agent: body.agentID, ttlSeconds: ttl,
                                          sessionTTLSeconds: sessionTTL, keyID: keyID, by: AuditContext(principal, request))
        return try .json(LinkAnswer(url: ConsoleRoutes.url(of: minted.code, publicURL: publicURL), expiresAt: minted.expiresAt),
                         status: 201)
    }

    /// The link's URL: the code in the fragment (never sent to a server, never in a log), under `PUBLIC_URL` when set.
    public static func url(of code: String, publicURL: String?) -> String {
        (publicURL ?? "") + "/console/#code=" + code
    }

    struct RedeemBody: RequestBody {
        let code: String
        enum CodingKeys: String, CodingKey, CaseIterable { case code }
    }

    struct SessionAnswer: Encodable {
        let token: String
        let expiresAt: Date
        let userID: String
        let role: String
        enum CodingKeys: String, CodingKey { case token, role, expiresAt = "expires_at", userID = "user_id" }
    }

    @Sendable func redeem(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(RedeemBody.self)
        guard let redeemed = try await links.redeem(body.code, accounts: accounts, request: request) else {
            throw Problem(status: 401, type: "/problems/unusable-link", title: "Unusable Link",
                          detail: "This sign-in link was used already, has expired, or is not one; ask for a new one.")
        }
        return try .json(SessionAnswer(token: redeemed.session.token, expiresAt: redeemed.session.expiresAt,
                                       userID: redeemed.agent, role: Role.agent.rawValue), status: 201)
    }
}
