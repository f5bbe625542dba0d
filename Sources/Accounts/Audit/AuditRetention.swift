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

    /// Deletes what is older than the retention, a few seals (with their entries) a transaction; how many entries
    /// went. Entries go with the seal that closes them, so one sealed in the same round as a newer one waits for it
    /// (a round covers about a second).
    public func prune() async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.withTransaction { [days] connection in
                _ = try await connection.query("""
                    SELECT set_config('switchboard.audit_purge_before', (now() - make_interval(days => $1::int))::text, true)
                    """, [days])
                // Seals older than the retention, with every entry each closes (a seal's time is its newest entry's,
                // so all of them are past it too), only from the start of each chain (what remains is a chain whose
                // first link's predecessor is gone, never one with a hole); then entries never sealed (no key).
                let sealed = try await connection.query("""
                    WITH old AS (
                        SELECT tenant_id, position, coalesce(entries, ARRAY[event_id]) AS ids FROM audit_seals s
                        WHERE created_at < now() - make_interval(days => $1::int)
                          AND NOT EXISTS (SELECT 1 FROM audit_seals k WHERE k.tenant_id = s.tenant_id AND k.position < s.position
                                                                       AND k.created_at >= now() - make_interval(days => $1::int))
                        ORDER BY created_at LIMIT 20 FOR UPDATE SKIP LOCKED
                    ), seals AS (
                        DELETE FROM audit_seals s USING old WHERE s.tenant_id = old.tenant_id AND s.position = old.position
                    )
                    DELETE FROM audit_events e WHERE e.id IN (SELECT unnest(ids) FROM old) RETURNING e.id
                    """, [days])
                let unsealed = try await connection.query("""
                    WITH old AS (
                        SELECT id FROM audit_events e
                        WHERE created_at < now() - make_interval(days => $1::int) AND \(AuditSealer.afterLastSealed)
                        ORDER BY id LIMIT 1000 FOR UPDATE SKIP LOCKED
                    )
                    DELETE FROM audit_events e USING old WHERE e.id = old.id RETURNING e.id
                    """, [days])
                return sealed.count + unsealed.count
            }
            total += deleted
            if deleted == 0 { return total }
        }
    }
}
