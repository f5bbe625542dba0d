import Accounts
import Foundation
import HTTPServer
import Postgres

/// Legal holds (GDPR Art. 17(3)): the tenant's backend puts a user on hold (`POST /v1/users/{user_id}/hold`) and
/// releases them (`DELETE …/hold`). While held, retention keeps the interactions the user opened and erasure of the
/// user is refused. Both are audited.
public struct LegalHoldRoutes: Sendable {
    let pool: PostgresPool
    let guardian: AccessGuard

    /// The routes over `pool`, for API keys.
    public init(pool: PostgresPool, guardian: AccessGuard) {
        self.pool = pool
        self.guardian = guardian
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.post("/v1/users/{user_id}/hold", guardian.require(.apiKey, hold))
        router.get("/v1/users/{user_id}/hold", guardian.require(.apiKey, show))
        router.delete("/v1/users/{user_id}/hold", guardian.require(.apiKey, release))
    }

    struct HoldBody: RequestBody {
        let reason: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case reason }
    }

    /// A hold as the API shows it.
    struct Hold: Encodable {
        let userID: String
        let reason: String?
        let since: Date
        enum CodingKeys: String, CodingKey { case userID = "user_id", reason, since }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(userID, forKey: .userID)
            try container.encode(reason, forKey: .reason)
            try container.encode(since, forKey: .since)
        }
    }

    static func user(_ request: Request) throws -> String {
        let user = request.parameter("user_id")
        try Problem.requireLength(user, of: "user_id", in: 1 ... 200)
        return user
    }

    @Sendable func hold(_ request: Request, _ principal: Principal) async throws -> Response {
        let user = try Self.user(request)
        let body = request.body.isEmpty ? HoldBody(reason: nil) : try request.decodeJSON(HoldBody.self)
        if let reason = body.reason { try Problem.requireLength(reason, of: "reason", in: 1 ... 1000) }
        let (hold, created) = try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                INSERT INTO legal_holds (tenant_id, user_id, reason) VALUES ($1::uuid, $2, $3)
                ON CONFLICT (tenant_id, user_id) DO UPDATE SET reason = coalesce(EXCLUDED.reason, legal_holds.reason)
                RETURNING reason, created_at, (xmax = 0) AS created
                """, [principal.tenantID, user, body.reason])
            let created: Bool = try rows[0].decode("created")
            try await AuditLog.record(created ? "legal_hold.placed" : "legal_hold.updated", .user(user),
                                      tenant: principal.tenantID, by: AuditContext(principal, request), on: connection)
            return (Hold(userID: user, reason: try rows[0].decode("reason"), since: try rows[0].decode("created_at")), created)
        }
        return try .json(hold, status: created ? 201 : 200)
    }

    @Sendable func show(_ request: Request, _ principal: Principal) async throws -> Response {
        let user = try Self.user(request)
        let rows = try await pool.withConnection { connection in
            try await connection.query("SELECT reason, created_at FROM legal_holds WHERE tenant_id = $1::uuid AND user_id = $2",
                                       [principal.tenantID, user])
        }
        guard let row = rows.first else { throw Problem.notFound("This user is not on hold.") }
        return try .json(Hold(userID: user, reason: try row.decode("reason"), since: try row.decode("created_at")))
    }

    @Sendable func release(_ request: Request, _ principal: Principal) async throws -> Response {
        let user = try Self.user(request)
        let released = try await pool.withTransaction { connection in
            let rows = try await connection.query(
                "DELETE FROM legal_holds WHERE tenant_id = $1::uuid AND user_id = $2 RETURNING 1", [principal.tenantID, user])
            guard !rows.isEmpty else { return false }
            try await AuditLog.record("legal_hold.released", .user(user), tenant: principal.tenantID,
                                      by: AuditContext(principal, request), on: connection)
            return true
        }
        guard released else { throw Problem.notFound("This user is not on hold.") }
        return .empty()
    }
}
