import Accounts
import Foundation
import Postgres

/// Automatic assignment (`round_robin`): an interaction goes to the online agent with the fewest open
/// interactions under the tenant's cap (ties: the one given one longest ago). Only agents holding an inbox stream
/// now take part (not those in their grace) and only those that chose `online`. Each agent's row is taken with
/// `SKIP LOCKED`, so concurrent creations never wait on one another and never both count under the cap with the
/// same room; one that finds every free agent busy leaves its interaction waiting, and the next drain assigns it.
struct AutoAssignment: Sendable {
    /// The agent a new interaction of tenant `tenant` (SQL) goes to, as the CTEs `settings` and `candidate` (no
    /// row: the tenant does not assign automatically, or no agent has room), its row locked for the statement.
    static func candidate(tenant: String) -> String {
        """
        settings AS (SELECT max_open_per_agent AS cap FROM tenant_settings
                     WHERE tenant_id = \(tenant) AND auto_assign = 'round_robin'),
        candidate AS (
            SELECT p.agent_id FROM agent_presence p, settings
            WHERE p.tenant_id = \(tenant) AND p.chosen = 'online' AND p.open_count < settings.cap
              AND EXISTS (SELECT 1 FROM agent_connections c WHERE c.tenant_id = p.tenant_id AND c.agent_id = p.agent_id
                          AND c.connected_until > now())
            ORDER BY p.open_count, p.last_assigned_at NULLS FIRST, p.agent_id
            LIMIT 1 FOR UPDATE OF p SKIP LOCKED)
        """
    }

    /// Assigns the oldest waiting interaction of some tenant that assigns automatically to one of its free agents;
    /// returns (interaction, agent), or nothing when no waiting interaction has a free agent.
    static let drainStatement = PreparedStatement("""
        WITH candidate AS (
            SELECT p.tenant_id, p.agent_id FROM agent_presence p
            JOIN tenant_settings s ON s.tenant_id = p.tenant_id AND s.auto_assign = 'round_robin'
            WHERE p.chosen = 'online' AND p.open_count < s.max_open_per_agent
              AND EXISTS (SELECT 1 FROM agent_connections c WHERE c.tenant_id = p.tenant_id AND c.agent_id = p.agent_id
                          AND c.connected_until > now())
              AND EXISTS (SELECT 1 FROM interactions w WHERE w.tenant_id = p.tenant_id AND w.state = 'started'
                          AND w.assigned_agent_id IS NULL)
            ORDER BY p.open_count, p.last_assigned_at NULLS FIRST, p.agent_id
            LIMIT 1 FOR UPDATE OF p SKIP LOCKED),
        waiting AS (
            SELECT w.id, candidate.agent_id FROM candidate
            CROSS JOIN LATERAL (SELECT id FROM interactions w WHERE w.tenant_id = candidate.tenant_id AND w.state = 'started'
                                AND w.assigned_agent_id IS NULL ORDER BY w.created_at, w.id
                                LIMIT 1 FOR UPDATE SKIP LOCKED) w)
        UPDATE interactions i SET assigned_agent_id = waiting.agent_id FROM waiting
        WHERE i.id = waiting.id
        RETURNING i.id, i.assigned_agent_id, i.tenant_id
        """)
}

extension InteractionStore {
    /// Assigns one waiting interaction to a free agent, if any pair exists; returns it.
    func drainOne(on connection: PostgresConnection) async throws -> (interaction: UUID, agent: String)? {
        let rows = try await connection.query(AutoAssignment.drainStatement)
        guard let row = rows.first else { return nil }
        let id: UUID = try row.decode("id")
        let agent: String = try row.decode("assigned_agent_id")
        try await logAutomaticAssignment(of: id, to: agent, tenant: try row.decode("tenant_id"), on: connection)
        return (id, agent)
    }

    private func logAutomaticAssignment(of id: UUID, to agent: String, tenant: UUID,
                                        on connection: PostgresConnection) async throws {
        let payload: [String: String?] = ["assigned_agent_id": agent, "previous_agent_id": nil, "by": nil]
        try await append(.assignment, payload, to: id, on: connection)
        try await AuditLog.record("interaction.assigned", AuditTarget("interaction", id), tenant: tenant,
                                  by: .system("automatic assignment"), on: connection)
    }
}
