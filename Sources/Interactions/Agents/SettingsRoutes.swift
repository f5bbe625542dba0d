import Accounts
import Foundation
import HTTPServer
import Postgres

/// A tenant's support settings: `GET /v1/settings` and `PATCH /v1/settings` (the tenant's backend, with its API
/// key) — automatic assignment (`auto_assign`: `off` or `round_robin`), the most open interactions it gives one
/// agent (`max_open_per_agent`; people may go past it by hand), and how many days ended interactions are kept
/// (`retention_days`; null keeps them).
public struct SettingsRoutes: Sendable {
    let pool: PostgresPool
    let guardian: AccessGuard
    /// Poked when assignment turns on or its cap rises, so waiting interactions find agents at once.
    let presence: PresenceKeeper?
    /// The fewest days a tenant may keep ended interactions for (`RETENTION_MIN_DAYS`).
    let retentionFloorDays: Int

    /// The routes over `pool`, guarded by `guardian`; `retentionFloorDays` bounds `retention_days` from below.
    public init(pool: PostgresPool, guardian: AccessGuard, presence: PresenceKeeper? = nil, retentionFloorDays: Int = 1) {
        self.pool = pool
        self.guardian = guardian
        self.presence = presence
        self.retentionFloorDays = retentionFloorDays
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.get("/v1/settings", guardian.require(.apiKey, read))
        router.patch("/v1/settings", guardian.require(.apiKey, update))
    }

    /// The settings as the API shows them.
    struct Settings: Encodable, Equatable {
        let autoAssign: String
        let maxOpenPerAgent: Int
        let retentionDays: Int?

        enum CodingKeys: String, CodingKey {
            case autoAssign = "auto_assign", maxOpenPerAgent = "max_open_per_agent", retentionDays = "retention_days"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(autoAssign, forKey: .autoAssign)
            try container.encode(maxOpenPerAgent, forKey: .maxOpenPerAgent)
            try container.encode(retentionDays, forKey: .retentionDays)  // null: kept
        }
    }

    struct Patch: RequestBody {
        let autoAssign: String?
        let maxOpenPerAgent: Int?
        /// Absent: unchanged; null: keep ended interactions; a number: days.
        let retentionDays: Int??

        enum CodingKeys: String, CodingKey, CaseIterable {
            case autoAssign = "auto_assign", maxOpenPerAgent = "max_open_per_agent", retentionDays = "retention_days"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            autoAssign = try container.decodeIfPresent(String.self, forKey: .autoAssign)
            maxOpenPerAgent = try container.decodeIfPresent(Int.self, forKey: .maxOpenPerAgent)
            retentionDays = container.contains(.retentionDays)
                ? .some(try container.decode(Int?.self, forKey: .retentionDays)) : .none
        }
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
        if case .some(.some(let days)) = patch.retentionDays, !(retentionFloorDays ... 36_500).contains(days) {
            throw Problem.badRequest("retention_days must be null (keep) or from \(retentionFloorDays) (this server's "
                                     + "RETENTION_MIN_DAYS) to 36500.", parameter: "retention_days")
        }
        let settings = try await pool.withTransaction { connection in
            _ = try await connection.query("""
                INSERT INTO tenant_settings (tenant_id, auto_assign, max_open_per_agent, retention_days)
                VALUES ($1::uuid, coalesce($2, 'off'), coalesce($3::int, 5), CASE WHEN $4 THEN $5::int END)
                ON CONFLICT (tenant_id) DO UPDATE SET auto_assign = coalesce($2, tenant_settings.auto_assign),
                    max_open_per_agent = coalesce($3::int, tenant_settings.max_open_per_agent),
                    retention_days = CASE WHEN $4 THEN $5::int ELSE tenant_settings.retention_days END
                """, [principal.tenantID, patch.autoAssign, patch.maxOpenPerAgent, patch.retentionDays != nil,
                      patch.retentionDays.flatMap { $0 }])
            try await AuditLog.record("settings.updated", AuditTarget("settings", principal.tenantID),
                                      tenant: principal.tenantID, by: AuditContext(principal, request), on: connection)
            return try await SettingsRoutes.settings(of: principal.tenantID, on: connection)
        }
        presence?.poke()
        return try .json(settings)
    }

    static func settings(of tenant: UUID, on connection: PostgresConnection) async throws -> Settings {
        let rows = try await connection.query("""
            SELECT coalesce(s.auto_assign, 'off') AS auto_assign, coalesce(s.max_open_per_agent, 5) AS max_open_per_agent,
                   s.retention_days
            FROM (SELECT 1) AS one LEFT JOIN tenant_settings s ON s.tenant_id = $1::uuid
            """, [tenant])
        let days: Int32? = try rows[0].decode("retention_days")
        return Settings(autoAssign: try rows[0].decode("auto_assign"), maxOpenPerAgent: try rows[0].decode("max_open_per_agent"),
                        retentionDays: days.map(Int.init))
    }
}
