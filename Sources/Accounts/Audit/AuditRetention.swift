import Foundation
import Postgres

/// Deletes audit entries (and their seals) older than the retention, in batches; the append-only trigger lets
/// these deletions through because the transaction names its cut-off (`switchboard.audit_purge_before`). A chain
/// whose oldest links went is checked from its first remaining link on.
public struct AuditRetention: Sendable {
    let pool: PostgresPool
    let days: Int

    /// Retention of `days` over `pool`.
    public init(pool: PostgresPool, days: Int) {
        self.pool = pool
        self.days = days
    }

    /// Deletes what is older than the retention, 1,000 entries a transaction; how many entries went.
    public func prune() async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.withTransaction { [days] connection in
                _ = try await connection.query("""
                    SELECT set_config('switchboard.audit_purge_before', (now() - make_interval(days => $1::int))::text, true)
                    """, [days])
                let rows = try await connection.query("""
                    WITH old AS (
                        SELECT id FROM audit_events WHERE created_at < now() - make_interval(days => $1::int)
                        ORDER BY id LIMIT 1000 FOR UPDATE SKIP LOCKED
                    ), seals AS (
                        DELETE FROM audit_seals s USING old WHERE s.event_id = old.id
                    )
                    DELETE FROM audit_events e USING old WHERE e.id = old.id RETURNING e.id
                    """, [days])
                return rows.count
            }
            total += deleted
            if deleted < 1000 { return total }
        }
    }
}
