import Accounts
import Coordination
import Foundation
import Postgres

/// Carries out erasures (GDPR Art. 17) in short steps, on whichever replica takes each one (`FOR UPDATE SKIP
/// LOCKED`: never two at once, never waiting on each other). An erasure starts ``grace`` after its request — its
/// sessions were revoked then, and the grace outlasts any token cache and any request already under way — and
/// goes through three phases:
///
/// 1. **attachments**: the files the user uploaded, their bytes a few pieces per step, then their rows;
/// 2. **interactions**: a walk by id over the interactions the user opened — or, for a user who ever acted as an
///    agent, over all of the tenant's — ``batch`` per step. In each, the messages the
///    user sent keep their place in the log with their text replaced by `""` and `"redacted": true` (their
///    attachments' metadata removed), the subject of an interaction the user opened is removed, the user's id
///    is replaced by the erasure's random pseudonym wherever it appears (events, the interaction, read positions,
///    notes' authors, webhook message bodies — delivered ones too), and the inbox preview of a redacted message is
///    blanked. Live streams are told which event ids were redacted (a `redacted:` notice), inbox streams see the
///    interactions change;
/// 3. **records**: stored responses of idempotency records that mention the user, sessions (pseudonymized),
///    the audit trail's pseudonym mapping (so the trail, which never held the user id, no longer leads to it),
///    view marks, console links and presence. The erasure then completes and forgets the user id.
///
/// A user on legal hold is skipped until released. No session can be opened for a user while their erasure is
/// pending (a trigger refuses it), so nothing they write can fall on either side of the walk.
public struct UserErasure: Sendable {
    let pool: PostgresPool
    /// How long after its request an erasure starts.
    public let grace: Duration
    /// Interactions one step walks.
    public let batch: Int

    /// Erasures over `pool`, each starting `grace` after its request.
    public init(pool: PostgresPool, grace: Duration = .seconds(10), batch: Int = 50) {
        self.pool = pool
        self.grace = grace
        self.batch = batch
    }

    /// What one step did.
    public enum Step: Sendable, Equatable {
        /// No erasure was due (or every due one is held by another replica, or its user is on hold).
        case idle
        /// One step of erasure `id`.
        case progressed(UUID)
        /// Erasure `id` completed.
        case completed(UUID)
    }

    /// Runs steps until none is due; returns the erasures completed. With `yielding`, each step is followed by a
    /// pause of `yielding` times its length (at least 10 ms).
    public func runDue(yielding: Int = 0) async throws -> [UUID] {
        var completed: [UUID] = []
        let clock = ContinuousClock()
        while true {
            let started = clock.now
            switch try await step() {
            case .idle: return completed
            case .completed(let id): completed.append(id)
            case .progressed: break
            }
            if yielding > 0 { try await Task.sleep(for: max(.milliseconds(10), (clock.now - started) * yielding)) }
        }
    }

    /// One short transaction of the oldest due erasure.
    public func step() async throws -> Step {
        try await pool.withTransaction { [grace, batch] connection in
            let rows = try await connection.query("""
                SELECT id, tenant_id, user_id, pseudonym, phase, scope, position FROM erasures e
                WHERE state = 'pending' AND requested_at <= now() - make_interval(secs => $1::float8)
                  AND NOT EXISTS (SELECT 1 FROM legal_holds h WHERE h.tenant_id = e.tenant_id AND h.user_id = e.user_id)
                ORDER BY requested_at LIMIT 1
                FOR UPDATE SKIP LOCKED
                """, [grace.inSeconds])
            guard let row = rows.first else { return .idle }
            let erasure = Pending(id: try row.decode("id"), tenantID: try row.decode("tenant_id"), userID: try row.decode("user_id"),
                                  pseudonym: try row.decode("pseudonym"), wholeTenant: try row.decode("scope", as: String.self) == "tenant",
                                  position: try row.decode("position"))
            switch try row.decode("phase", as: String.self) {
            case "attachments":
                try await erasure.deleteAttachments(on: connection)
            case "interactions":
                try await erasure.walk(batch: batch, on: connection)
            default:
                try await erasure.finish(on: connection)
                return .completed(erasure.id)
            }
            return .progressed(erasure.id)
        }
    }
}

/// One pending erasure, as a step holds it locked.
private struct Pending {
    let id: UUID
    let tenantID: UUID
    let userID: String
    let pseudonym: String
    /// Whether the walk visits all of the tenant's interactions (the user acted as an agent) or only those the user
    /// opened.
    let wholeTenant: Bool
    let position: UUID?

    /// A webhook message's body with user `$2` erased from its `data` (`$3` their pseudonym), as SQL.
    static let redactedBody = "jsonb_set(body::jsonb, '{data}', erasure_redact(body::jsonb->'data', $2, $3))::text"

    /// A few pieces of the user's files (about 10 MiB), or, once none is left, their rows; then the walk.
    func deleteAttachments(on connection: PostgresConnection) async throws {
        let pieces = try await connection.query("""
            DELETE FROM attachment_pieces p USING (
                SELECT p.attachment_id, p.byte_offset FROM attachment_pieces p JOIN attachments a ON a.id = p.attachment_id
                WHERE a.tenant_id = $1::uuid AND a.uploader_user_id = $2 LIMIT 40) d
            WHERE p.attachment_id = d.attachment_id AND p.byte_offset = d.byte_offset RETURNING 1
            """, [tenantID, userID]).count
        guard pieces == 0 else { return }
        let files = try await connection.query(
            "DELETE FROM attachments WHERE tenant_id = $1::uuid AND uploader_user_id = $2 RETURNING 1", [tenantID, userID]).count
        _ = try await connection.query("""
            UPDATE erasures SET phase = 'interactions', attachments_deleted = attachments_deleted + $2 WHERE id = $1::uuid
            """, [id, files])
    }

    /// The next `batch` interactions of the tenant (by id): their events, rows, read positions, notes and webhook
    /// messages rid of the user; the redacted events announced to live streams.
    func walk(batch: Int, on connection: PostgresConnection) async throws {
        let ids: [UUID] = try await connection.query("""
            SELECT id FROM interactions WHERE tenant_id = $1::uuid AND ($2::uuid IS NULL OR id > $2::uuid)
              AND ($4::boolean OR customer_id = $5)
            ORDER BY id LIMIT $3
            """, [tenantID, position, batch, wholeTenant, userID]).map { try $0.decode("id") }
        guard let last = ids.last else {
            _ = try await connection.query("UPDATE erasures SET phase = 'records' WHERE id = $1::uuid", [id])
            return
        }
        let parameters: [(any PostgresEncodable)?] = [PostgresArray(ids), userID, pseudonym]
        let events = try await connection.query("""
            UPDATE interaction_events SET payload = erasure_redact(payload, $2, $3)
            WHERE interaction_id = ANY($1::uuid[])
              AND $2 IN (payload->>'sender_id', payload->>'reader_id', payload->>'assigned_agent_id',
                         payload->>'previous_agent_id', payload->>'by')
            RETURNING interaction_id, seq, kind = 'message' AND payload->>'sender_id' = $3 AS redacted, payload->>'id' AS message_id
            """, parameters)
        var redacted: [UUID: [Int64]] = [:]
        var touched = Set<UUID>()
        var messageIDs: [String] = []
        for row in events {
            let interaction: UUID = try row.decode("interaction_id")
            touched.insert(interaction)
            if try row.decode("redacted", as: Bool.self) {
                redacted[interaction, default: []].append(try row.decode("seq"))
                if let message: String = try row.decode("message_id") { messageIDs.append(message) }
            }
        }
        let opened = try await connection.query("""
            UPDATE interactions SET customer_id = $3, subject = NULL
            WHERE id = ANY($1::uuid[]) AND customer_id = $2 RETURNING id
            """, parameters).map { try $0.decode("id", as: UUID.self) }
        touched.formUnion(opened)
        touched.formUnion(try await connection.query("""
            UPDATE interactions SET assigned_agent_id = $3 WHERE id = ANY($1::uuid[]) AND assigned_agent_id = $2 RETURNING id
            """, parameters).map { try $0.decode("id", as: UUID.self) })
        if !messageIDs.isEmpty {
            _ = try await connection.query("""
                UPDATE interactions SET inbox_preview = inbox_preview || '{"text": "", "redacted": true}'::jsonb
                WHERE id = ANY($1::uuid[]) AND inbox_preview->>'id' = ANY($2::text[])
                """, [PostgresArray(ids), PostgresArray(messageIDs)])
        }
        _ = try await connection.query(
            "UPDATE interaction_reads SET reader_id = $3 WHERE interaction_id = ANY($1::uuid[]) AND reader_id = $2", parameters)
        _ = try await connection.query(
            "UPDATE interaction_notes SET author_id = $3 WHERE interaction_id = ANY($1::uuid[]) AND author_id = $2", parameters)
        // Webhook messages of these interactions and of their notes' queues (keyed by a uuid made from the id).
        let webhooks = try await connection.query("""
            UPDATE webhook_messages SET body = \(Pending.redactedBody)
            WHERE (interaction_id = ANY($1::uuid[])
                   OR interaction_id IN (SELECT md5(i::text || ':notes')::uuid FROM unnest($1::uuid[]) AS i))
              AND erasure_redact(body::jsonb->'data', $2, $3) IS DISTINCT FROM body::jsonb->'data'
            RETURNING 1
            """, parameters).count
        if !touched.isEmpty {
            // The changes for inbox streams and every notice, in one statement.
            let notices = touched.flatMap { InteractionNotice.redactions(of: $0, seqs: redacted[$0] ?? []) }
            _ = try await connection.query("""
                WITH changed AS (
                    INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT $1::uuid, unnest($2::uuid[])
                )
                SELECT count(pg_notify('\(InteractionStore.channel)', n)) FROM unnest($3::text[]) AS n
                """, [tenantID, PostgresArray(Array(touched)), PostgresArray(notices.map(\.payload))])
        }
        _ = try await connection.query("""
            UPDATE erasures SET position = $2::uuid, messages_redacted = messages_redacted + $3,
                   subjects_redacted = subjects_redacted + $4, webhook_messages_redacted = webhook_messages_redacted + $5
            WHERE id = $1::uuid
            """, [id, last, redacted.values.reduce(0) { $0 + $1.count }, opened.count, webhooks])
    }

    /// The records that mention the user, then the erasure's completion (which forgets the user id).
    func finish(on connection: PostgresConnection) async throws {
        let tenant: [(any PostgresEncodable)?] = [tenantID, userID, pseudonym]
        // Stored responses naming the user (a JSON string: `"<id>"`, with `/` escaped or not) or made for them.
        let idempotency = try await connection.query("""
            DELETE FROM idempotency_keys WHERE tenant_id = $1::uuid
              AND (principal IN ('user:customer:' || $2, 'user:agent:' || $2)
                   OR position(convert_to(to_json($2::text)::text, 'UTF8') IN body) > 0
                   OR position(convert_to(replace(to_json($2::text)::text, '/', '\\/'), 'UTF8') IN body) > 0)
            RETURNING 1
            """, [tenantID, userID]).count
        // An agent's status changes wait in a queue keyed by a uuid made from the tenant and the agent.
        let agentWebhooks = try await connection.query("""
            UPDATE webhook_messages SET body = \(Pending.redactedBody)
            WHERE tenant_id = $1::uuid AND interaction_id = md5($1::text || ':agent:' || $2)::uuid RETURNING 1
            """, tenant).count
        // Sessions opened since the request are revoked too (and announced, so their streams end); then all of the
        // user's sessions carry the pseudonym.
        let sessionsRevoked = try await AccountStore.revokeSessions(tenantID: tenantID, userID: userID, on: connection)
        _ = try await connection.query("UPDATE sessions SET user_id = $3 WHERE tenant_id = $1::uuid AND user_id = $2", tenant)
        for statement in [
            "DELETE FROM audit_pseudonyms WHERE tenant_id = $1::uuid AND user_id = $2",
            "DELETE FROM audit_views WHERE tenant_id = $1::uuid AND viewer = $2",
            "DELETE FROM console_links WHERE tenant_id = $1::uuid AND agent_id = $2",
            "DELETE FROM agent_presence WHERE tenant_id = $1::uuid AND agent_id = $2",
        ] {
            _ = try await connection.query(statement, [tenantID, userID])
        }
        _ = try await connection.query("""
            UPDATE erasures SET state = 'completed', user_id = NULL, completed_at = now(),
                   idempotency_records_deleted = $2, webhook_messages_redacted = webhook_messages_redacted + $3,
                   sessions_revoked = sessions_revoked + $4
            WHERE id = $1::uuid
            """, [id, idempotency, agentWebhooks, sessionsRevoked])
        try await AuditLog.record("erasure.completed", AuditTarget("erasure", id), tenant: tenantID,
                                  by: .system("erasure"), on: connection)
    }
}
