import Foundation
import Postgres

/// Retention of conversations: interactions `ended` or `failed` longer ago than their tenant's `retention_days`
/// (never fewer than the server's floor) are deleted with everything kept of them — events, notes, read positions,
/// attachments and their bytes, inbox changes, audit view marks, and the webhook messages and attempts that carry
/// their texts. Interactions still `started` are never purged, nor those whose customer is on legal hold.
///
/// A round takes a few interactions with `FOR UPDATE SKIP LOCKED`, so replicas running it at once never delete the
/// same rows twice and never wait for each other; and each transaction deletes at most ``batch`` rows of any one
/// kind, so a conversation of a million events goes in many short transactions, never one long lock.
public struct ConversationRetention: Sendable {
    let pool: PostgresPool
    /// The fewest days any tenant's interactions are kept (`RETENTION_MIN_DAYS`).
    public let floorDays: Int
    /// Rows of one kind deleted by one transaction at most.
    public let batch: Int

    /// Retention over `pool`, never shorter than `floorDays`.
    public init(pool: PostgresPool, floorDays: Int, batch: Int = 2000) {
        self.pool = pool
        self.floorDays = floorDays
        self.batch = batch
    }

    /// What one transaction deleted.
    public struct Round: Sendable, Equatable {
        /// Rows deleted, of every kind.
        public var rows = 0
        /// Interactions deleted (once their rows were gone).
        public var interactions = 0
    }

    /// Runs rounds until nothing is left to purge as of `now`; rows and interactions deleted. With `yielding`, each
    /// round is followed by a pause of `yielding` times its own length (at least 10 ms): the purge then takes at most
    /// 1 / (1 + yielding) of the database's time, whatever the machine, and writes keep their latency.
    public func purge(now: Date, yielding: Int = 0) async throws -> Round {
        var total = Round()
        let clock = ContinuousClock()
        while true {
            let started = clock.now
            let round = try await purgeOnce(now: now)
            total.rows += round.rows
            total.interactions += round.interactions
            if round.rows == 0 { return total }
            if yielding > 0 { try await Task.sleep(for: max(.milliseconds(10), (clock.now - started) * yielding)) }
        }
    }

    /// One short transaction: up to 20 purgeable interactions (skipping those another replica holds), then either a
    /// batch of their rows or, once those are gone, the interactions themselves.
    public func purgeOnce(now: Date) async throws -> Round {
        try await pool.withTransaction { [floorDays, batch] connection in
            let ids: [UUID] = try await connection.query("""
                SELECT i.id FROM interactions i JOIN tenant_settings s ON s.tenant_id = i.tenant_id
                WHERE i.state IN ('ended', 'failed') AND s.retention_days IS NOT NULL
                  AND i.ended_at < $1::timestamptz - make_interval(days => greatest(s.retention_days, $2::int))
                  AND NOT EXISTS (SELECT 1 FROM legal_holds h WHERE h.tenant_id = i.tenant_id AND h.user_id = i.customer_id)
                ORDER BY i.ended_at LIMIT 20
                FOR UPDATE OF i SKIP LOCKED
                """, [now, floorDays]).map { try $0.decode("id") }
            guard !ids.isEmpty else { return Round() }
            let interactions = PostgresArray(ids)
            // The big collections first, a batch at a time; the interaction rows go last, with what little is left.
            for statement in ConversationRetention.batchedDeletes {
                let deleted = try await connection.query(statement, [interactions, batch]).count
                if deleted > 0 { return Round(rows: deleted) }
            }
            var rows = 0
            for statement in ConversationRetention.finalDeletes {
                rows += try await connection.query(statement, [interactions]).count
            }
            let gone = try await connection.query(
                "DELETE FROM interactions WHERE id = ANY($1::uuid[]) RETURNING id", [interactions]).count
            return Round(rows: rows + gone, interactions: gone)
        }
    }

    /// Deletes of at most `$2` rows belonging to the interactions `$1`, largest collections first.
    static let batchedDeletes = [
        """
        DELETE FROM interaction_events e USING (
            SELECT interaction_id, seq FROM interaction_events WHERE interaction_id = ANY($1::uuid[]) LIMIT $2) d
        WHERE e.interaction_id = d.interaction_id AND e.seq = d.seq RETURNING 1
        """,
        """
        DELETE FROM webhook_messages WHERE id IN (
            SELECT id FROM webhook_messages WHERE interaction_id = ANY($1::uuid[]) LIMIT $2) RETURNING 1
        """,
        """
        DELETE FROM attachment_pieces p USING (
            SELECT p.attachment_id, p.byte_offset FROM attachment_pieces p JOIN attachments a ON a.id = p.attachment_id
            WHERE a.interaction_id = ANY($1::uuid[]) LIMIT greatest($2 / 100, 1)) d
        WHERE p.attachment_id = d.attachment_id AND p.byte_offset = d.byte_offset RETURNING 1
        """,
        """
        DELETE FROM interaction_changes WHERE ctid IN (
            SELECT ctid FROM interaction_changes WHERE interaction_id = ANY($1::uuid[]) LIMIT $2) RETURNING 1
        """,
    ]

    /// What is left of the interactions `$1` once the batches are done (each small), before the rows themselves.
    static let finalDeletes = [
        "DELETE FROM interaction_notes WHERE interaction_id = ANY($1::uuid[]) RETURNING 1",
        "DELETE FROM interaction_reads WHERE interaction_id = ANY($1::uuid[]) RETURNING 1",
        "DELETE FROM attachments WHERE interaction_id = ANY($1::uuid[]) RETURNING 1",
        "DELETE FROM audit_views WHERE interaction_id = ANY($1::uuid[]) RETURNING 1",
    ]

    /// How long ago the oldest interaction still kept under a retention ended (nil when none is), for the metrics.
    public func oldestRetainedAge(now: Date) async throws -> Double? {
        try await pool.withConnection { connection in
            try await connection.query("""
                SELECT extract(epoch FROM $1::timestamptz - min(i.ended_at))::float8 AS age
                FROM interactions i JOIN tenant_settings s ON s.tenant_id = i.tenant_id AND s.retention_days IS NOT NULL
                WHERE i.state IN ('ended', 'failed')
                """, [now]).first?.decode("age")
        }
    }
}
