import Accounts
import HTTPServer
import Foundation
import Postgres

extension InteractionStore {
    /// ``markRead(through:by:in:on:)`` without a transaction of its own, in one statement that is its own transaction:
    /// the position's check as there (a position already at or past `eventID` is answered as the statement's snapshot
    /// has it, with no row lock), else the row lock, the position, the `read` event (or, on an interaction that is
    /// over, the change for inbox streams), the notice, and the position as it then stands. One round trip instead of
    /// eight (BEGIN, check, lock, position, event, notice, position, COMMIT). `connection` must not be in a
    /// transaction.
    ///
    /// The same guarantees: `read` events of one reader in increasing order and only when the position advanced,
    /// none after an interaction's final event, and the same errors. Nil, rarely, when the event read through was
    /// logged while the statement waited for the row: then ``markRead(through:by:in:on:)`` in a transaction must do
    /// it (it counts the messages read after taking the lock; the statement counts them in its snapshot).
    public func markReadAlone(through eventID: Int64, by principal: Principal, in id: UUID,
                              on connection: PostgresConnection) async throws -> ReadPosition? {
        guard let role = principal.role, let reader = principal.userID else { throw InteractionError.notFound(id) }
        let rows = try await connection.query(InteractionStore.readAloneStatement, [
            id, principal.tenantID, InteractionStore.customerScope(principal), role.rawValue, reader, eventID,
        ])
        guard let row = rows.first else { throw InteractionError.notFound(id) }
        if try row.decode("locked", as: Bool.self) == false {
            // Already at or past `eventID`: the position stays as the snapshot has it (the log's last id only grows).
            return ReadPosition(readThrough: try row.decode("standing_read_through"),
                                unreadCount: try row.decode("standing_unread_count"))
        }
        if let readThrough = try row.decode("read_through", as: Int64?.self) {
            return ReadPosition(readThrough: readThrough, unreadCount: try row.decode("unread_count"))
        }
        let lastSeq: Int64 = try row.decode("last_seq")
        guard eventID <= lastSeq else { throw InteractionError.readBeyondLog(id, eventID: eventID, lastSeq: lastSeq) }
        if eventID > (try row.decode("seen_last_seq", as: Int64.self)) { return nil }
        // Not advanced: the position was already at or past `eventID` (another request of the reader's moved it
        // meanwhile). Where it stands now, as a statement begun after that one committed sees it.
        return try await position(of: principal, in: id, on: connection)
    }

    /// Interaction `$1` of tenant `$2` (of customer `$3` when not null), read by `$5` on side `$4` through event `$6`.
    /// `standing` is the reader's position and unread count in the statement's snapshot; when it is already at or
    /// past `$6` (and `$6` in the log), nothing is locked or written (`locked` false). Otherwise: takes the row lock;
    /// when `$6` is in the log as the snapshot has it (so every message it covers is counted) and beyond the reader's
    /// position, moves the position, appends the `read` event if the interaction is open (else records the change
    /// for inbox streams) and sends the notice. Answers the log's last id as locked (`last_seq`) and as the snapshot
    /// saw it (`seen_last_seq`), and, when it moved the position, the position and the unread count (null
    /// otherwise). No row: no such interaction for this caller.
    static let readAloneStatement = PreparedStatement("""
        WITH standing AS (
            SELECT i.id, i.last_seq, position.read_through,
                   \(unreadCount(of: "i", side: "$4::text", reader: "$5::text")) AS unread_count
            FROM interactions i,
                 LATERAL (SELECT \(readThrough(of: "i.id", side: "$4::text", reader: "$5::text")) AS read_through) position
            WHERE i.id = $1::uuid AND i.tenant_id = $2::uuid AND ($3::text IS NULL OR i.customer_id = $3)
        ), target AS (
            SELECT id, tenant_id, state, last_seq,
                   CASE WHEN $4::text = 'agent' THEN customer_messages ELSE agent_messages END AS other_messages
            FROM interactions
            WHERE id = (SELECT id FROM standing WHERE NOT ($6::bigint <= last_seq AND $6::bigint <= read_through))
            FOR UPDATE
        ), \(positionMove(interaction: "$1::uuid", side: "$4::text", reader: "$5::text", through: "$6::bigint", when: """
            EXISTS (SELECT 1 FROM target t, standing s WHERE $6::bigint > 0 AND $6::bigint <= t.last_seq AND $6::bigint <= s.last_seq)
            """))
        , next AS (
            UPDATE interactions SET \(nextEvent(payload: "'{}'::jsonb", isMessage: "false"))
            WHERE id = (SELECT id FROM target WHERE state = '\(InteractionState.started.rawValue)')
              AND EXISTS (SELECT 1 FROM advanced)
            RETURNING last_seq
        ), appended AS (
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT $1::uuid, last_seq, '\(InteractionStore.Kind.read.rawValue)', \(readPayload) FROM next
            RETURNING seq
        ), changed AS (
            INSERT INTO interaction_changes (tenant_id, interaction_id)
            SELECT tenant_id, id FROM target WHERE EXISTS (SELECT 1 FROM advanced)
        )
        SELECT t.id IS NOT NULL AS locked, s.read_through AS standing_read_through,
               s.unread_count AS standing_unread_count,
               t.last_seq, s.last_seq AS seen_last_seq, a.read_through, t.other_messages - a.messages_read AS unread_count,
               CASE WHEN a.read_through IS NOT NULL
                    THEN pg_notify('\(InteractionStore.channel)',
                                   $1::text || ':' || coalesce((SELECT seq FROM appended), t.last_seq)) END AS notified
        FROM standing s LEFT JOIN target t ON true LEFT JOIN advanced a ON true
        """)

    /// The payload of the `read` event the statement appends (``ReadEvent``'s fields), as SQL.
    private static let readPayload =
        "jsonb_build_object('reader_id', $5::text, 'reader_role', $4::text, 'read_through', $6::bigint)"
}
