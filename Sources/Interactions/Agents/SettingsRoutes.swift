import Accounts
import Foundation
import HTTPServer
import Postgres

/// A tenant's support settings: `GET /v1/settings` and `PATCH /v1/settings` (the tenant's backend, with its API
/// key) — automatic assignment (`auto_assign`: `off` or `round_robin`) and the most open interactions it gives one
/// agent (`max_open_per_agent`; people may go past it by hand).
public struct SettingsRoutes: Sendable {
    let pool: PostgresPool
    let guardian: AccessGuard
    /// Poked when assignment turns on or its cap rises, so waiting interactions find agents at once.
    let presence: PresenceKeeper?

    /// The routes over `pool`, guarded by `guardian`.
    public init(pool: PostgresPool, guardian: AccessGuard, presence: PresenceKeeper? = nil) {
        self.pool = pool
        self.guardian = guardian
        self.presence = presence
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.get("/v1/settings", guardian.require(.apiKey, read))
        router.patch("/v1/settings", guardian.require(.apiKey, update))
    }

    /// The settings as the API shows them.
    struct Settings: Codable, Equatable {
        let autoAssign: String
        let maxOpenPerAgent: Int

        enum CodingKeys: String, CodingKey { case autoAssign = "auto_assign", maxOpenPerAgent = "max_open_per_agent" }
    }

    struct Patch: RequestBody {
        let autoAssign: String?
        let maxOpenPerAgent: Int?

        enum CodingKeys: String, CodingKey, CaseIterable { case autoAssign = "auto_assign", maxOpenPerAgent = "max_open_per_agent" }
    }

    static let modes = ["off", "round_robin"]

    @Sendable func read(_ request: Request, _ principal: Principal) async throws -> Response {
        try .json(try await pool.withConnection { try await SettingsRoutes.settings(of: principal.tenantID, on: $0) })
    }

    @Sendable func update(_ request: Request, _ principal: Principal) async throws -> Response {
        let patch = try request.decodeJSON(Patch.self)
        if let mode = patch.autoAssign, !SettingsRoutes.modes.contains(mode) {
            throw Problem.badRequest("auto_assign must be off or round_robin.", parameter: "auto_assign")
        }
        if let cap = patch.maxOpenPerAgent, !(1 ... 10_000).contains(cap) {
            throw Problem.badRequest("max_open_per_agent must be from 1 to 10000.", parameter: "max_open_per_agent")
        }
        let settings = try await pool.withTransaction { connection in
            _ = try await connection.query("""
                INSERT INTO tenant_settings (tenant_id, auto_assign, max_open_per_agent)
                VALUES ($1::uuid, coalesce($2, 'off'), coalesce($3::int, 5))
                ON CONFLICT (tenant_id) DO UPDATE SET auto_assign = coalesce($2, tenant_settings.auto_assign),
                                                      max_open_per_agent = coalesce($3::int, tenant_settings.max_open_per_agent)
                """, [principal.tenantID, patch.autoAssign, patch.maxOpenPerAgent])
            try await AuditLog.record("settings.updated", AuditTarget("settings", principal.tenantID),
                                      tenant: principal.tenantID, by: AuditContext(principal, request), on: connection)
            return try await SettingsRoutes.settings(of: principal.tenantID, on: connection)
        }
        presence?.poke()
        return try .json(settings)
    }

    static func settings(of tenant: UUID, on connection: PostgresConnection) async throws -> Settings {
        let rows = try await connection.query("""
            SELECT coalesce(s.auto_assign, 'off') AS auto_assign, coalesce(s.max_open_per_agent, 5) AS max_open_per_agent
            FROM (SELECT 1) AS one LEFT JOIN tenant_settings s ON s.tenant_id = $1::uuid
            """, [tenant])
        return Settings(autoAssign: try rows[0].decode("auto_assign"), maxOpenPerAgent: try rows[0].decode("max_open_per_agent"))
    }
}
