import Foundation
import HTTPServer
import Postgres

/// The audit trail's API: a tenant's entries for its API key (`GET /v1/audit`), every tenant's for the operator
/// (`GET /v1/admin/audit`), oldest first, filtered by time, actor and action, a page at a time.
public struct AuditRoutes: Sendable {
    let pool: PostgresPool
    let guardian: AccessGuard
    let adminToken: String?

    /// Routes over `pool`; the operator's exists only when `adminToken` is set.
    public init(pool: PostgresPool, guardian: AccessGuard, adminToken: String?) {
        self.pool = pool
        self.guardian = guardian
        self.adminToken = adminToken
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.get("/v1/audit", guardian.require(.apiKey) { request, principal in
            try await page(request, tenant: principal.tenantID)
        })
        if let adminToken, !adminToken.isEmpty {
            router.get("/v1/admin/audit", AdminGuard(token: adminToken).require { request in
                let tenant = try request.parsedQuery("tenant") { UUID(uuidString: $0) }
                return try await page(request, tenant: tenant)
            })
        }
    }

    /// One entry as listed.
    struct Item: Encodable {
        struct Party: Encodable { let kind: String, id: String }
        let id: String
        let tenant_id: String
        let actor: Party
        let action: String
        let target: Party
        let request_id: String
        let address: String
        let created_at: Date
        let sealed: Bool
    }

    private func page(_ request: Request, tenant: UUID?) async throws -> Response {
        let limit = try request.integerQuery("limit", default: 50, in: 1 ... 500)
        let after = try request.parsedQuery("cursor") { Int64($0).flatMap { $0 >= 0 ? $0 : nil } } ?? 0
        let sinceText = request.queryValue("since").flatMap { $0.isEmpty ? nil : $0 }
        let since = sinceText.flatMap(RFC3339.date(from:))
        if sinceText != nil, since == nil {
            throw Problem.badRequest("since must be an RFC 3339 time (2026-12-01T09:00:00Z).", parameter: "since")
        }
        let actor = request.queryValue("actor").flatMap { $0.isEmpty ? nil : $0 }
        let action = request.queryValue("action").flatMap { $0.isEmpty ? nil : $0 }
        for (name, value) in [("actor", actor), ("action", action)] {
            if let value { try Problem.requireLength(value, of: name, in: 1 ... 200) }
        }
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT \(AuditEntry.columns(of: "e")), e.created_at,
                       EXISTS (SELECT 1 FROM audit_seals s WHERE s.event_id = e.id) AS sealed
                FROM audit_events e
                WHERE ($1::uuid IS NULL OR e.tenant_id = $1::uuid) AND e.id > $2
                  AND ($3::timestamptz IS NULL OR e.created_at >= $3) AND ($4::text IS NULL OR e.actor_id = $4)
                  AND ($5::text IS NULL OR e.action = $5)
                ORDER BY e.id LIMIT $6
                """, [tenant, after, since, actor, action, limit + 1])
        }
        let items = try rows.map { row -> (Item, Int64) in
            let entry = try AuditEntry(row: row)
            let item = Item(id: String(entry.id), tenant_id: entry.tenantID.lowercased,
                            actor: .init(kind: entry.actorKind, id: entry.actorID), action: entry.action,
                            target: .init(kind: entry.targetKind, id: entry.targetID), request_id: entry.requestID,
                            address: entry.address, created_at: try row.decode("created_at"), sealed: try row.decode("sealed"))
            return (item, entry.id)
        }
        return try .json(PageBody(overfetched: items, limit: limit, item: \.0, cursor: { String($0.1) }))
    }
}
