import Foundation
import Postgres

/// Presence in Postgres: each replica renews a lease per agent holding an inbox stream there, and a sweep (run by
/// every replica; one statement, so a change is found and announced by exactly one) turns leases and choices into
/// statuses.
struct PresenceStore: Sendable {
    let pool: PostgresPool

    /// Renews, for `replica`, the leases of `agents` (tenant, agent) until `lease` from now, and ends at once those
    /// of `released` (their last stream here closed: the grace starts now).
    func renew(_ agents: [(tenant: UUID, agent: String)], released: [(tenant: UUID, agent: String)], replica: UUID,
               lease: Duration) async throws {
        guard !agents.isEmpty || !released.isEmpty else { return }
        try await pool.withTransaction { connection in
            if !agents.isEmpty {
                // An agent's presence row is what automatic assignment locks (`SKIP LOCKED`): renewing every second
                // leaves it alone — a new agent's row is inserted, an existing one not touched (DO NOTHING takes no
                // lock) — and `last_seen_at` moves at most every 30 s, when the row is locked for a moment.
                let seen: [(any PostgresEncodable)?] = [PostgresArray(agents.map(\.tenant)), PostgresArray(agents.map(\.agent))]
                _ = try await connection.query("""
                    WITH seen AS (SELECT * FROM unnest($1::uuid[], $2::text[]) AS s (tenant_id, agent_id)),
                    present AS (
                        INSERT INTO agent_presence (tenant_id, agent_id, last_seen_at) SELECT tenant_id, agent_id, now() FROM seen
                        ON CONFLICT (tenant_id, agent_id) DO NOTHING)
                    INSERT INTO agent_connections (tenant_id, agent_id, replica_id, connected_until)
                    SELECT tenant_id, agent_id, $3::uuid, now() + $4::bigint * interval '1 millisecond' FROM seen
                    ON CONFLICT (tenant_id, agent_id, replica_id) DO UPDATE SET connected_until = excluded.connected_until
                    """, seen + [replica, lease.wholeMilliseconds])
                _ = try await connection.query("""
                    UPDATE agent_presence SET last_seen_at = now()
                    WHERE (tenant_id, agent_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
                      AND (last_seen_at IS NULL OR last_seen_at < now() - interval '30 seconds')
                    """, seen)
            }
            if !released.isEmpty {
                _ = try await connection.query("""
                    UPDATE agent_connections SET connected_until = least(connected_until, now())
                    WHERE replica_id = $3::uuid AND (tenant_id, agent_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
                    """, [PostgresArray(released.map(\.tenant)), PostgresArray(released.map(\.agent)), replica])
            }
        }
    }

    /// Sets every agent's status from its choice and leases — `offline` once its last lease ended more than `grace`
    /// ago — and announces each change on `channel`; returns the changes. Leases long over are removed.
    func sweep(grace: Duration, channel: String) async throws -> [AgentStatusChange] {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                WITH computed AS (
                    SELECT p.tenant_id, p.agent_id,
                           CASE WHEN c.until IS NULL OR c.until + $1::bigint * interval '1 millisecond' < now() THEN 'offline'
                                ELSE p.chosen END AS status
                    FROM agent_presence p
                    LEFT JOIN LATERAL (SELECT max(connected_until) AS until FROM agent_connections c
                                       WHERE c.tenant_id = p.tenant_id AND c.agent_id = p.agent_id) c ON true
                    WHERE p.status <> 'offline' OR c.until IS NOT NULL),
                changed AS (
                    UPDATE agent_presence p SET status = computed.status, status_changed_at = now(), status_seq = p.status_seq + 1
                    FROM computed
                    WHERE p.tenant_id = computed.tenant_id AND p.agent_id = computed.agent_id AND p.status <> computed.status
                    RETURNING p.tenant_id, p.agent_id, p.status),
                pruned AS (
                    DELETE FROM agent_connections
                    WHERE connected_until + $1::bigint * interval '1 millisecond' < now() - interval '1 minute')
                SELECT tenant_id, agent_id, status,
                       pg_notify($2, 'agent:' || tenant_id::text || ':' || status || ':' || agent_id) AS announced
                FROM changed
                """, [grace.wholeMilliseconds, channel])
        }
        return try rows.map { row in
            AgentStatusChange(tenantID: try row.decode("tenant_id"), agentID: try row.decode("agent_id"),
                              status: AgentStatus(rawValue: try row.decode("status")) ?? .offline)
        }
    }

    /// Records what `agent` chose (its status follows at the next sweep).
    func choose(_ status: AgentStatus, tenant: UUID, agent: String) async throws {
        _ = try await pool.withConnection { connection in
            try await connection.query("""
                INSERT INTO agent_presence (tenant_id, agent_id, chosen) VALUES ($1::uuid, $2, $3)
                ON CONFLICT (tenant_id, agent_id) DO UPDATE SET chosen = excluded.chosen
                """, [tenant, agent, status.rawValue])
        }
    }

    /// Every agent of `tenant` seen by presence or assigned an interaction, by id.
    func agents(of tenant: UUID) async throws -> [AgentSummary] {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                WITH open AS (SELECT assigned_agent_id AS agent_id, count(*) AS n FROM interactions
                              WHERE tenant_id = $1::uuid AND state = 'started' AND assigned_agent_id IS NOT NULL
                              GROUP BY assigned_agent_id)
                SELECT coalesce(p.agent_id, open.agent_id) AS agent_id, coalesce(p.status, 'offline') AS status,
                       coalesce(open.n, 0) AS open_interactions, p.last_seen_at
                FROM (SELECT * FROM agent_presence WHERE tenant_id = $1::uuid) p
                FULL JOIN open ON open.agent_id = p.agent_id
                ORDER BY 1
                """, [tenant])
        }
        return try rows.map { row in
            AgentSummary(agentID: try row.decode("agent_id"), status: AgentStatus(rawValue: try row.decode("status")) ?? .offline,
                         openInteractions: try row.decode("open_interactions"), lastSeenAt: try row.decode("last_seen_at"))
        }
    }

    /// How many agents of `tenant` are online now.
    func onlineCount(of tenant: UUID) async throws -> Int64 {
        let rows = try await pool.withConnection { connection in
            try await connection.query(PresenceStore.onlineCountStatement, [tenant])
        }
        return try rows[0].decode("n")
    }

    static let onlineCountStatement = PreparedStatement("""
        SELECT count(*) AS n FROM agent_presence WHERE tenant_id = $1::uuid AND status = 'online'
        """)
}
