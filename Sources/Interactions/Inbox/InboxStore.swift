import Foundation
import Postgres

/// The inbox's reads, each run by the dispatcher inside one read-only repeatable-read transaction, so that every
/// read of one batch sees the same snapshot — the one the batch's positions name.
struct InboxStore: Sendable {
    /// Opens the batch's transaction on `connection` (inside `BEGIN`) and returns its snapshot.
    func beginBatch(on connection: PostgresConnection) async throws -> XidSnapshot {
        _ = try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        let rows = try await connection.query("SELECT pg_current_snapshot()::text AS snapshot")
        let text: String = try rows[0].decode("snapshot")
        guard let snapshot = XidSnapshot(text: text) else { throw PostgresError(.decoding, "unreadable snapshot \(text)", column: "snapshot") }
        return snapshot
    }

    /// The key inbox positions are sealed with when none is configured: made once, from the system's random source,
    /// by whichever replica asks first, and then the same for all.
    func positionKey(on connection: PostgresConnection) async throws -> [UInt8] {
        try await ServiceKeys.key(named: "inbox_position", on: connection)
    }

    /// Deletes the changes recorded longer ago than `age` (at most `limit` of them) and remembers the highest
    /// transaction among them; returns how many went.
    func prune(olderThan age: Duration, limit: Int, on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query("""
            WITH gone AS (
                DELETE FROM interaction_changes WHERE ctid IN (
                    SELECT ctid FROM interaction_changes
                    WHERE changed_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
                RETURNING xid),
            kept AS (
                INSERT INTO inbox_pruned (below) SELECT max(xid) FROM gone HAVING count(*) > 0
                ON CONFLICT (singleton) DO UPDATE SET below = greatest(inbox_pruned.below, excluded.below))
            SELECT count(*) AS n FROM gone
            """, [age.wholeMilliseconds, limit])
        return Int(try rows[0].decode("n", as: Int64.self))
    }

    /// The highest transaction whose changes were pruned, if any were.
    func prunedBelow(on connection: PostgresConnection) async throws -> UInt64? {
        let rows = try await connection.query("SELECT below::text AS below FROM inbox_pruned")
        return try rows.first.flatMap { UInt64(try $0.decode("below", as: String.self)) }
    }

    /// A change the client does not have: an interaction to show as it stands now (at the number of its latest
    /// such change, the order in which changes go out), or a note to deliver (at its own number).
    struct Change: Sendable {
        enum Item: Sendable {
            case interaction(InboxSummary)
            case note(InboxNote)
        }
        let item: Item
        let seq: Int64

        var tenantID: UUID {
            switch item {
            case .interaction(let summary): summary.tenantID
            case .note(let note): note.tenantID
            }
        }
    }

    /// The interactions of `tenants` with a change `position` does not cover, visible now, as they stand now, and
    /// the notes it does not cover, all in number order.
    func changes(of tenants: [UUID], since position: InboxPosition, on connection: PostgresConnection) async throws -> [Change] {
        guard !tenants.isEmpty else { return [] }
        let parameters: [(any PostgresEncodable)?] = [
            PostgresArray(tenants), String(position.lowestUncoveredXid),
            PostgresArray(position.clauses.map(\.snapshot.text)), PostgresArray(position.clauses.map(\.through)),
        ]
        let interactions = try await connection.query(InboxStore.changesStatement, parameters).map {
            Change(item: .interaction(try InboxSummary($0)), seq: try $0.decode("change_seq"))
        }
        let notes = try await connection.query(InboxStore.notesStatement, parameters).map {
            Change(item: .note(try InboxNote($0)), seq: try $0.decode("change_seq"))
        }
        return (interactions + notes).sorted { $0.seq < $1.seq }
    }

    /// Notes of tenants `$1` from transaction `$2` on, less those a clause (snapshot `$3[n]`, bound `$4[n]`) covers.
    static let notesStatement = PreparedStatement("""
        SELECT n.id, n.note_seq, n.author_id, n.text, n.after_seq, n.created_at, n.change_seq, n.tenant_id,
               n.interaction_id, i.state, i.assigned_agent_id
        FROM interaction_notes n JOIN interactions i ON i.id = n.interaction_id
        WHERE n.tenant_id = ANY($1::uuid[]) AND n.xid >= $2::text::xid8
          AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::bigint[]) AS p (snapshot, through)
                          WHERE pg_visible_in_snapshot(n.xid, p.snapshot::pg_snapshot)
                            AND (p.through IS NULL OR n.change_seq <= p.through))
        ORDER BY n.change_seq
        """)

    /// Changes of tenants `$1` from transaction `$2` on, less those a clause (snapshot `$3[n]`, bound `$4[n]`) covers.
    static let changesStatement = PreparedStatement("""
        WITH changed AS (
            SELECT c.interaction_id, max(c.seq) AS change_seq FROM interaction_changes c
            WHERE c.tenant_id = ANY($1::uuid[]) AND c.xid >= $2::text::xid8
              AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::bigint[]) AS p (snapshot, through)
                              WHERE pg_visible_in_snapshot(c.xid, p.snapshot::pg_snapshot)
                                AND (p.through IS NULL OR c.seq <= p.through))
            GROUP BY c.interaction_id)
        SELECT changed.change_seq, \(InboxSummary.columns)
        FROM changed JOIN interactions i ON i.id = changed.interaction_id
        ORDER BY changed.change_seq
        """)

    /// Interactions of `tenant` in `states` (assigned to `agent` when given; to nobody with `unassigned`), newest
    /// first, `limit` after keyset (`created_at`, `id`) `after`.
    func snapshot(of tenant: UUID, states: [InteractionState], agent: String?, unassigned: Bool, limit: Int,
                  after: (createdAt: Date, id: UUID)?, on connection: PostgresConnection) async throws -> [InboxSummary] {
        let rows = try await connection.query(InboxStore.snapshotStatement, [
            tenant, PostgresArray(states.map(\.rawValue)), agent, unassigned, after?.createdAt, after?.id, limit,
        ])
        return try rows.map(InboxSummary.init)
    }

    static let snapshotStatement = PreparedStatement("""
        SELECT \(InboxSummary.columns) FROM interactions i
        WHERE i.tenant_id = $1::uuid AND i.state = ANY($2::text[])
          AND ($3::text IS NULL OR i.assigned_agent_id = $3) AND (NOT $4::bool OR i.assigned_agent_id IS NULL)
          AND ($5::timestamptz IS NULL OR (i.created_at, i.id) < ($5, $6::uuid))
        ORDER BY i.created_at DESC, i.id DESC LIMIT $7
        """)
}
