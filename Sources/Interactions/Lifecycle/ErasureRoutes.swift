import Accounts
import Foundation
import HTTPServer
import Postgres

/// Erasure of a user's data (GDPR Art. 17), for the tenant's backend: `DELETE /v1/users/{user_id}/data` records the
/// request, revokes the user's sessions (their streams end on every replica) and answers 202 with the erasure;
/// ``UserErasure`` carries it out in the background. `GET /v1/erasures/{id}` shows its state and what it did. A
/// user on legal hold cannot be erased (409); a second request while one is under way answers the same erasure.
public struct ErasureRoutes: Sendable {
    let pool: PostgresPool
    let guardian: AccessGuard

    /// The routes over `pool`, for API keys.
    public init(pool: PostgresPool, guardian: AccessGuard) {
        self.pool = pool
        self.guardian = guardian
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.delete("/v1/users/{user_id}/data", guardian.require(.apiKey, erase))
        router.get("/v1/erasures/{id}", guardian.require(.apiKey, show))
    }

    @Sendable func erase(_ request: Request, _ principal: Principal) async throws -> Response {
        let user = try LegalHoldRoutes.user(request)
        let erasure = try await pool.withTransaction { connection in
            // The hold's row is read with a share lock: a hold placed at the same moment waits, and the worker
            // skips held users anyway.
            let held = try await connection.query(
                "SELECT 1 FROM legal_holds WHERE tenant_id = $1::uuid AND user_id = $2 FOR SHARE", [principal.tenantID, user])
            guard held.isEmpty else {
                throw Problem(status: 409, type: "/problems/legal-hold", title: "Legal Hold",
                              detail: "This user is on legal hold: their data cannot be erased until the hold is released.")
            }
            // A customer writes only in the interactions they opened; a user who ever acted as an agent may have
            // written in any of the tenant's.
            let rows = try await connection.query("""
                INSERT INTO erasures (tenant_id, user_id, pseudonym, scope)
                SELECT $1::uuid, $2, $3, CASE WHEN EXISTS (SELECT 1 FROM sessions WHERE tenant_id = $1::uuid AND user_id = $2 AND role = 'agent')
                                               OR EXISTS (SELECT 1 FROM agent_presence WHERE tenant_id = $1::uuid AND agent_id = $2)
                                               OR EXISTS (SELECT 1 FROM interactions WHERE tenant_id = $1::uuid AND assigned_agent_id = $2)
                                          THEN 'tenant' ELSE 'opened' END
                ON CONFLICT (tenant_id, user_id) WHERE state = 'pending' DO UPDATE SET requested_at = erasures.requested_at
                RETURNING \(Erasure.columns), (xmax = 0) AS created
                """, [principal.tenantID, user, "erased-" + UUID().uuidString.lowercased()])
            var erasure = try Erasure(rows[0])
            guard try rows[0].decode("created", as: Bool.self) else { return erasure }
            let revoked = try await AccountStore.revokeSessions(tenantID: principal.tenantID, userID: user, on: connection)
            _ = try await connection.query("UPDATE erasures SET sessions_revoked = $2 WHERE id = $1::uuid", [erasure.id, revoked])
            erasure.counts.sessionsRevoked = Int64(revoked)
            try await AuditLog.record("user.erasure_requested", .user(user), tenant: principal.tenantID,
                                      by: AuditContext(principal, request), on: connection)
            return erasure
        }
        return try .json(erasure, status: 202, headers: ["Location": "/v1/erasures/\(erasure.id.lowercased)"])
    }

    @Sendable func show(_ request: Request, _ principal: Principal) async throws -> Response {
        guard let id = UUID(uuidString: request.parameter("id")) else { throw Problem.notFound("No such erasure.") }
        let rows = try await pool.withConnection { connection in
            try await connection.query("SELECT \(Erasure.columns) FROM erasures WHERE id = $1::uuid AND tenant_id = $2::uuid",
                                       [id, principal.tenantID])
        }
        guard let row = rows.first else { throw Problem.notFound("No such erasure.") }
        return try .json(try Erasure(row))
    }
}

/// An erasure as the API shows it: never the user id (it is what was erased).
struct Erasure: Encodable {
    let id: UUID
    let state: String
    let requestedAt: Date
    let completedAt: Date?
    var counts: Counts

    /// What the erasure did so far.
    struct Counts: Encodable {
        var messagesRedacted: Int64
        var subjectsRedacted: Int64
        var attachmentsDeleted: Int64
        var webhookMessagesRedacted: Int64
        var idempotencyRecordsDeleted: Int64
        var sessionsRevoked: Int64

        enum CodingKeys: String, CodingKey {
            case messagesRedacted = "messages_redacted", subjectsRedacted = "subjects_redacted"
            case attachmentsDeleted = "attachments_deleted", webhookMessagesRedacted = "webhook_messages_redacted"
            case idempotencyRecordsDeleted = "idempotency_records_deleted", sessionsRevoked = "sessions_revoked"
        }
    }

    static let columns = """
        id, state, requested_at, completed_at, messages_redacted, subjects_redacted, attachments_deleted,
        webhook_messages_redacted, idempotency_records_deleted, sessions_revoked
        """

    init(_ row: PostgresRow) throws {
        id = try row.decode("id")
        state = try row.decode("state")
        requestedAt = try row.decode("requested_at")
        completedAt = try row.decode("completed_at")
        counts = Counts(messagesRedacted: try row.decode("messages_redacted"), subjectsRedacted: try row.decode("subjects_redacted"),
                        attachmentsDeleted: try row.decode("attachments_deleted"),
                        webhookMessagesRedacted: try row.decode("webhook_messages_redacted"),
                        idempotencyRecordsDeleted: try row.decode("idempotency_records_deleted"),
                        sessionsRevoked: try row.decode("sessions_revoked"))
    }

    enum CodingKeys: String, CodingKey {
        case id, state, counts, requestedAt = "requested_at", completedAt = "completed_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.lowercased, forKey: .id)
        try container.encode(state, forKey: .state)
        try container.encode(requestedAt, forKey: .requestedAt)
        try container.encode(completedAt, forKey: .completedAt)
        try container.encode(counts, forKey: .counts)
    }
}
