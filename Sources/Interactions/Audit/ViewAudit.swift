import Accounts
import Coordination
import Foundation
import HTTPServer
import Postgres

/// `interaction.viewed` entries: an agent's read of an interaction is recorded at most once per agent, interaction
/// and ten minutes. The database decides (`audit_views`, so replicas agree); each replica remembers what it recorded
/// lately and skips the statement for those reads.
public final class ViewAudit: Sendable {
    let pool: PostgresPool
    /// How long one entry covers an agent's reads of an interaction.
    public static let window = Duration.seconds(600)
    /// When this replica last recorded (or found recorded) each agent's view of each interaction.
    private let recent = Locked([String: ContinuousClock.Instant]())

    /// Views recorded over `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Records that `principal` (when an agent) read `interaction`, unless done in the last ten minutes.
    func viewed(_ interaction: UUID, by principal: Principal, _ request: Request) async throws {
        guard principal.role == .agent, let agent = principal.userID else { return }
        let key = "\(principal.tenantID)|\(interaction)|\(agent)"
        let now = ContinuousClock.now
        let fresh = recent.withLock { recent in
            if let last = recent[key], now - last < ViewAudit.window { return true }
            if recent.count >= 50_000 { recent = recent.filter { now - $0.value < ViewAudit.window } }
            recent[key] = now
            return false
        }
        if fresh { return }
        let parameters: [(any PostgresEncodable)?] = [principal.tenantID, agent, interaction, Double(ViewAudit.window.wholeMilliseconds) / 1000]
        _ = try await pool.withConnection { connection in
            try await connection.query("""
                WITH seen AS (
                    INSERT INTO audit_views AS v (tenant_id, viewer, interaction_id, viewed_at)
                    VALUES ($1::uuid, $2, $3::uuid, now())
                    ON CONFLICT (tenant_id, viewer, interaction_id) DO UPDATE SET viewed_at = now()
                        WHERE v.viewed_at < now() - make_interval(secs => $4::float8)
                    RETURNING 1
                )
                SELECT \(AuditLog.call(from: 5)) FROM seen
                """, parameters + AuditLog.parameters("interaction.viewed", AuditTarget("interaction", interaction),
                                                      tenant: principal.tenantID, by: AuditContext(principal, request)))
        }
    }
}
