import Accounts
import Foundation
import HTTPServer
import Postgres

/// Endpoints, the outbox and the attempt log in Postgres. Every endpoint query is scoped to a tenant.
public struct WebhookStore: Sendable {
    /// The NOTIFY channel that wakes delivery workers (the outbox trigger notifies it).
    public static let channel = "switchboard_webhooks"
    /// Most endpoints one tenant may have (every event is copied once per subscribed endpoint).
    public static let endpointLimit = 20

    let pool: PostgresPool

    /// A store over `pool`.
    public init(pool: PostgresPool) { self.pool = pool }

    static let columns = """
        id, url, array_to_json(events)::text AS events, disabled_at, disabled_reason, created_at, updated_at,
        CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at,
        (extract(epoch FROM created_at) * 1000000)::bigint AS created_micros
        """

    /// Creates an endpoint; throws ``WebhookError/endpointLimit(_:)`` when the tenant already has ``endpointLimit`` of
    /// them.
    func create(tenantID: UUID, url: String, events: [WebhookEventType], secret: WebhookSecret,
                by context: AuditContext) async throws -> WebhookEndpoint {
        let rows = try await pool.withTransaction { connection in
            // Serialises creations of one tenant, so the limit holds under concurrent requests.
            _ = try await connection.query("SELECT 1 FROM tenants WHERE id = $1::uuid FOR UPDATE", [tenantID])
            let rows = try await connection.query("""
                INSERT INTO webhook_endpoints (tenant_id, url, events, secret)
                SELECT $1::uuid, $2, ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), $4
                WHERE (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1::uuid) < $5
                RETURNING \(WebhookStore.columns)
                """, [tenantID, url, try WebhookStore.json(events.map(\.rawValue)), secret.text, WebhookStore.endpointLimit])
            if let row = rows.first {
                try await WebhookStore.audit("webhook_endpoint.created", try row.decode("id"), tenantID, context, connection)
            }
            return rows
        }
        guard let row = rows.first else { throw WebhookError.endpointLimit(WebhookStore.endpointLimit) }
        var endpoint = try WebhookStore.endpoint(row)
        endpoint.secret = secret.text
        return endpoint
    }

    /// A page of the tenant's endpoints, newest first, each with the cursor that continues after it.
    func endpoints(tenantID: UUID, limit: Int, after cursor: KeysetCursor?) async throws -> [(WebhookEndpoint, KeysetCursor)] {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT \(WebhookStore.columns) FROM webhook_endpoints
                WHERE tenant_id = $1::uuid
                  AND ($2::bigint IS NULL OR (created_at, id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
                ORDER BY created_at DESC, id DESC LIMIT $4
                """, [tenantID, cursor?.micros, cursor?.id, limit])
        }
        return try rows.map { row in
            (try WebhookStore.endpoint(row), KeysetCursor(micros: try row.decode("created_micros"), id: try row.decode("id")))
        }
    }

    /// The tenant's endpoint `id`, if it exists.
    func endpoint(_ id: UUID, tenantID: UUID) async throws -> WebhookEndpoint? {
        let rows = try await pool.withConnection { connection in
            try await connection.query("SELECT \(WebhookStore.columns) FROM webhook_endpoints WHERE id = $1::uuid AND tenant_id = $2::uuid",
                                       [id, tenantID])
        }
        return try rows.first.map(WebhookStore.endpoint)
    }

    /// Changes what is given; `disabled` true disables with the tenant as the reason, false re-enables (and clears
    /// the reason). Nil when there is no such endpoint.
    func update(_ id: UUID, tenantID: UUID, url: String?, events: [WebhookEventType]?, disabled: Bool?,
                by context: AuditContext) async throws -> WebhookEndpoint? {
        let rows = try await pool.withTransaction { connection in
            // Disabling parks the endpoint's pending messages (due at 'infinity'); re-enabling makes them due now.
            let rows = try await connection.query("""
                WITH updated AS (
                    UPDATE webhook_endpoints SET
                        url = coalesce($3, url),
                        events = coalesce(ARRAY(SELECT jsonb_array_elements_text($4::jsonb)), events),
                        disabled_at = CASE WHEN $5::boolean IS NULL THEN disabled_at
                                           WHEN $5 THEN coalesce(disabled_at, now()) END,
                        disabled_reason = CASE WHEN $5::boolean IS NULL THEN disabled_reason
                                               WHEN $5 THEN coalesce(disabled_reason, 'disabled by the tenant') END,
                        updated_at = now()
                    WHERE id = $1::uuid AND tenant_id = $2::uuid
                    RETURNING \(WebhookStore.columns)
                ), parked AS (
                    UPDATE webhook_messages m
                    SET next_attempt_at = CASE WHEN u.disabled_at IS NULL THEN now() ELSE 'infinity' END
                    FROM updated u
                    WHERE $5::boolean IS NOT NULL AND m.endpoint_id = u.id AND m.status = 'pending'
                      AND (u.disabled_at IS NOT NULL OR m.next_attempt_at = 'infinity')
                )
                SELECT * FROM updated
                """, [id, tenantID, url, try events.map { try WebhookStore.json($0.map(\.rawValue)) }, disabled])
            if !rows.isEmpty { try await WebhookStore.audit("webhook_endpoint.updated", id, tenantID, context, connection) }
            return rows
        }
        if disabled == false, !rows.isEmpty { await nudge() }
        return try rows.first.map(WebhookStore.endpoint)
    }

    /// Deletes the endpoint with its messages and attempts; false when there was none.
    func delete(_ id: UUID, tenantID: UUID, by context: AuditContext) async throws -> Bool {
        let rows = try await pool.withTransaction { connection in
            let rows = try await connection.query(
                "DELETE FROM webhook_endpoints WHERE id = $1::uuid AND tenant_id = $2::uuid RETURNING id", [id, tenantID])
            if !rows.isEmpty { try await WebhookStore.audit("webhook_endpoint.deleted", id, tenantID, context, connection) }
            return rows
        }
        return !rows.isEmpty
    }

    /// Replaces the secret with `secret`; the replaced one keeps signing for `overlap`. Nil when there is no such
    /// endpoint.
    func rotate(_ id: UUID, tenantID: UUID, to secret: WebhookSecret, overlap: Duration,
                by context: AuditContext) async throws -> WebhookEndpoint? {
        let rows = try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                UPDATE webhook_endpoints SET previous_secret = secret, secret = $3,
                    previous_secret_expires_at = now() + $4::bigint * interval '1 second', updated_at = now()
                WHERE id = $1::uuid AND tenant_id = $2::uuid
                RETURNING \(WebhookStore.columns)
                """, [id, tenantID, secret.text, overlap.components.seconds])
            if !rows.isEmpty {
                try await WebhookStore.audit("webhook_endpoint.secret_rotated", id, tenantID, context, connection)
            }
            return rows
        }
        return try rows.first.map { row in
            var endpoint = try WebhookStore.endpoint(row)
            endpoint.secret = secret.text
            return endpoint
        }
    }

    /// Records an endpoint change in its transaction.
    private static func audit(_ action: String, _ id: UUID, _ tenantID: UUID, _ context: AuditContext,
                              _ connection: PostgresConnection) async throws {
        try await AuditLog.record(action, AuditTarget("webhook_endpoint", id), tenant: tenantID, by: context, on: connection)
    }

    /// A page of the endpoint's attempts, newest first; nil when the tenant has no such endpoint.
    func attempts(of endpointID: UUID, tenantID: UUID, limit: Int,
                  after cursor: KeysetCursor?) async throws -> [(WebhookAttempt, KeysetCursor)]? {
        let rows = try await pool.withConnection { connection -> PostgresRows? in
            let owned = try await connection.query("SELECT 1 FROM webhook_endpoints WHERE id = $1::uuid AND tenant_id = $2::uuid",
                                                   [endpointID, tenantID])
            guard !owned.isEmpty else { return nil }
            // The log's rows, and the first attempts that delivered, which their messages' rows keep (migration
            // 406): each side a walk of its own index in the page's order, merged.
            return try await connection.query("""
                SELECT *, (extract(epoch FROM attempted_at) * 1000000)::bigint AS micros FROM (
                    (SELECT a.id, a.message_id, m.event_type, a.attempt, a.outcome, a.response_status, a.latency_ms,
                            a.error, a.attempted_at
                     FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id
                     WHERE a.endpoint_id = $1::uuid
                       AND ($2::bigint IS NULL OR (a.attempted_at, a.id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
                     ORDER BY a.attempted_at DESC, a.id DESC LIMIT $4)
                    UNION ALL
                    (SELECT m.first_attempt_id, m.id, m.event_type, 1, 'delivered', m.first_response_status,
                            m.first_latency_ms, NULL, m.first_attempted_at
                     FROM webhook_messages m
                     WHERE m.endpoint_id = $1::uuid AND m.first_attempt_id IS NOT NULL
                       AND ($2::bigint IS NULL OR (m.first_attempted_at, m.first_attempt_id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
                     ORDER BY m.first_attempted_at DESC, m.first_attempt_id DESC LIMIT $4)
                ) attempts
                ORDER BY attempted_at DESC, id DESC LIMIT $4
                """, [endpointID, cursor?.micros, cursor?.id, limit])
        }
        return try rows?.map { row in
            let attempt = WebhookAttempt(
                id: try row.decode("id", as: UUID.self).lowercased, webhookID: WebhookID.text(try row.decode("message_id")),
                eventType: try row.decode("event_type"), attempt: try row.decode("attempt"), outcome: try row.decode("outcome"),
                responseStatus: try row.decode("response_status"), latencyMS: try row.decode("latency_ms"),
                error: try row.decode("error"), attemptedAt: try row.decode("attempted_at"))
            return (attempt, KeysetCursor(micros: try row.decode("micros"), id: try row.decode("id")))
        }
    }

    /// Queues message `id` of the tenant again, due now, its retry schedule started afresh (same `webhook-id`).
    /// Returns when it is due, or nil when the tenant has no such message.
    func redeliver(_ id: UUID, tenantID: UUID) async throws -> Date? {
        let rows = try await pool.withConnection { connection in
            // A first attempt kept in the row moves into the log, since the next first attempt may take its place.
            try await connection.query("""
                WITH target AS (
                    SELECT id FROM webhook_messages WHERE id = $1::uuid AND tenant_id = $2::uuid FOR UPDATE
                ), kept AS (
                    INSERT INTO webhook_attempts (id, message_id, endpoint_id, attempt, outcome, response_status,
                                                  latency_ms, error, attempted_at)
                    SELECT m.first_attempt_id, m.id, m.endpoint_id, 1, 'delivered', m.first_response_status,
                           m.first_latency_ms, NULL, m.first_attempted_at
                    FROM webhook_messages m JOIN target t ON t.id = m.id
                    WHERE m.first_attempt_id IS NOT NULL
                )
                UPDATE webhook_messages m SET status = 'pending', attempts = 0, lease_until = NULL, lease_token = NULL,
                    finished_at = NULL, first_attempt_id = NULL, first_attempted_at = NULL,
                    first_response_status = NULL, first_latency_ms = NULL,
                    next_attempt_at = CASE WHEN e.disabled_at IS NULL THEN now() ELSE 'infinity' END
                FROM target t, webhook_endpoints e
                WHERE m.id = t.id AND e.id = m.endpoint_id
                RETURNING now() AS next_attempt_at
                """, [id, tenantID])
        }
        if !rows.isEmpty { await nudge() }
        return try rows.first?.decode("next_attempt_at")
    }

    /// Wakes the delivery workers of every replica (best effort: they poll anyway).
    private func nudge() async {
        _ = try? await pool.withConnection { try await $0.query("SELECT pg_notify($1, '')", [WebhookStore.channel]) }
    }

    static func endpoint(_ row: PostgresRow) throws -> WebhookEndpoint {
        let events = try JSONDecoder().decode([String].self, from: Data(try row.decode("events", as: String.self).utf8))
        let disabledAt: Date? = try row.decode("disabled_at")
        return WebhookEndpoint(id: try row.decode("id", as: UUID.self).lowercased, url: try row.decode("url"), events: events,
                               disabled: disabledAt != nil, disabledReason: try row.decode("disabled_reason"),
                               disabledAt: disabledAt, previousSecretExpiresAt: try row.decode("previous_secret_expires_at"),
                               createdAt: try row.decode("created_at"), updatedAt: try row.decode("updated_at"), secret: nil)
    }

    static func json(_ strings: [String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: strings), as: UTF8.self)
    }
}
