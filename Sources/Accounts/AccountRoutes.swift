import Foundation
import HTTPServer

/// The accounts API: tenant administration (operator), sessions (tenant backends and app users).
public struct AccountRoutes: Sendable {
    let store: AccountStore
    let tokens: TokenStore
    let guardian: AccessGuard
    let adminToken: String?
    let maxSessionTTL: Int

    /// Routes over `store`; the admin routes exist only when `adminToken` is set.
    public init(store: AccountStore, tokens: TokenStore, guardian: AccessGuard, adminToken: String?,
                maxSessionTTL: Int = 30 * 86_400) {
        self.store = store
        self.tokens = tokens
        self.guardian = guardian
        self.adminToken = adminToken
        self.maxSessionTTL = maxSessionTTL
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        if let adminToken, !adminToken.isEmpty {
            let admin = AdminGuard(token: adminToken)
            router.post("/v1/admin/tenants", admin.require(createTenant))
            router.post("/v1/admin/tenants/{id}/keys", admin.require(issueKey))
            router.delete("/v1/admin/tenants/{id}/keys/{key_id}", admin.require(revokeKey))
        }
        router.post("/v1/sessions", guardian.require(.apiKey, createSession))
        router.get("/v1/sessions/current", guardian.require(.session, currentSession))
        router.delete("/v1/sessions/current", guardian.require(.session, revokeCurrentSession))
        router.delete("/v1/users/{user_id}/sessions", guardian.require(.apiKey, revokeUserSessions))
    }

    struct CreateTenant: RequestBody {
        let name: String
        enum CodingKeys: String, CodingKey, CaseIterable { case name }
    }

    @Sendable func createTenant(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(CreateTenant.self)
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        try Problem.requireLength(name, of: "name", in: 1 ... 200)
        let tenant = try await store.createTenant(name: name, by: .admin(request))
        return try .json(tenant, status: 201)
    }

    struct KeyIssued: Encodable { let id: String, api_key: String, created_at: Date }

    @Sendable func issueKey(_ request: Request) async throws -> Response {
        guard let tenantID = UUID(uuidString: request.parameter("id")),
              let key = try await store.issueKey(tenantID: tenantID, by: .admin(request)) else {
            throw Problem.notFound("No such tenant.")
        }
        return try .json(KeyIssued(id: key.id.lowercased, api_key: key.apiKey, created_at: key.createdAt), status: 201)
    }

    @Sendable func revokeKey(_ request: Request) async throws -> Response {
        guard let tenantID = UUID(uuidString: request.parameter("id")),
              let keyID = UUID(uuidString: request.parameter("key_id")),
              try await store.revokeKey(tenantID: tenantID, keyID: keyID, by: .admin(request)) else {
            throw Problem.notFound("No such key for this tenant.")
        }
        await tokens.forgetAll()
        return .empty()
    }

    struct CreateSession: RequestBody {
        let user_id: String
        let role: String
        let ttl_seconds: Int?
        enum CodingKeys: String, CodingKey, CaseIterable { case user_id, role, ttl_seconds }
    }

    struct SessionBody: Encodable {
        let token: String?
        let expires_at: Date
        let user_id: String
        let role: Role
        let tenant_id: String?
    }

    @Sendable func createSession(_ request: Request, _ principal: Principal) async throws -> Response {
        let body = try request.decodeJSON(CreateSession.self)
        try Problem.requireLength(body.user_id, of: "user_id", in: 1 ... 200)
        guard let role = Role(rawValue: body.role) else {
            throw Problem.badRequest("role must be 'customer' or 'agent'.", parameter: "role")
        }
        let ttl = body.ttl_seconds ?? 86_400
        guard (60 ... maxSessionTTL).contains(ttl) else {
            throw Problem.badRequest("ttl_seconds must be from 60 to \(maxSessionTTL).", parameter: "ttl_seconds")
        }
        var keyID: UUID?
        if case .apiKey(let id) = principal.credential { keyID = id }
        let session = try await store.createSession(tenantID: principal.tenantID, userID: body.user_id, role: role,
                                                    ttlSeconds: ttl, keyID: keyID, by: AuditContext(principal, request))
        return try .json(SessionBody(token: session.token, expires_at: session.expiresAt, user_id: body.user_id,
                                     role: role, tenant_id: nil), status: 201)
    }

    @Sendable func currentSession(_ request: Request, _ principal: Principal) async throws -> Response {
        try .json(SessionBody(token: nil, expires_at: principal.expiresAt ?? Date(), user_id: principal.userID ?? "",
                              role: principal.role ?? .customer, tenant_id: principal.tenantID.lowercased))
    }

    /// Signs a user out everywhere: every session of theirs is revoked; live streams end on every replica at once,
    /// other requests within the token cache's bound.
    @Sendable func revokeUserSessions(_ request: Request, _ principal: Principal) async throws -> Response {
        let userID = request.parameter("user_id")
        try Problem.requireLength(userID, of: "user_id", in: 1 ... 200)
        _ = try await store.revokeSessions(tenantID: principal.tenantID, userID: userID, by: AuditContext(principal, request))
        await tokens.forgetAll()
        return .empty()
    }

    @Sendable func revokeCurrentSession(_ request: Request, _ principal: Principal) async throws -> Response {
        guard case .session(let sessionID, _, _) = principal.credential else { throw AuthError.unknown }
        try await store.revokeSession(id: sessionID, tenantID: principal.tenantID, by: AuditContext(principal, request))
        await tokens.forget(try AccessGuard.bearerToken(request))
        return .empty()
    }
}
