import Accounts
import Foundation
import Postgres

extension InteractionStore {
    /// The payload of a `read` event (the webhooks read these names: keep them).
    struct ReadEvent: Encodable {
        let readerID: String
        let readerRole: String
        let readThrough: Int64

        enum CodingKeys: String, CodingKey {
            case readerID = "reader_id", readerRole = "reader_role", readThrough = "read_through"
        }
    }

    /// Moves the read position of the session `principal` in `id` up to `eventID` (never back) and returns where it
    /// stands. The position and its `read` event are written under the interaction's row lock, so `read` events of
    /// one reader appear in the log in increasing order, and only when the position advanced. On an interaction that
    /// is over, the position is recorded but no event is written: its log ends with the final `state` event.
    ///
    /// Throws ``InteractionError/notFound(_:)`` when `principal` may not see the interaction (or is not a session),
    /// ``InteractionError/readBeyondLog(_:eventID:lastSeq:)`` when `eventID` is beyond its log.
    public func markRead(through eventID: Int64, by principal: Principal, in id: UUID,
                         on connection: PostgresConnection) async throws -> ReadPosition {
        let (role, reader, unchanged) = try await readCheck(through: eventID, by: principal, in: id, on: connection)
        if let unchanged { return unchanged }
        guard let locked = try await lock(id, for: principal, on: connection) else { throw InteractionError.notFound(id) }
        guard eventID <= locked.lastSeq else {
            throw InteractionError.readBeyondLog(id, eventID: eventID, lastSeq: locked.lastSeq)
        }
        if eventID > 0 {
            let advanced = try await connection.query("""
                WITH \(InteractionStore.positionMove(interaction: "$1::uuid", side: "$2::text", reader: "$3::text",
                                                        through: "$4::bigint", when: "true"))
                SELECT read_through FROM advanced
                """, [id, role.rawValue, reader, eventID])
            if !advanced.isEmpty {
                if locked.state.isOpen {
                    let event = ReadEvent(readerID: reader, readerRole: role.rawValue, readThrough: eventID)
                    try await append(.read, encoding: event, to: id, on: connection)
                } else {
                    // No event after the final one; the reader's unread count changed all the same.
                    try await touch(id, on: connection)
                }
            }
        }
        return try await position(of: principal, in: id, on: connection)
    }

    /// What both ways of marking read check first: the reader (a session's role and user id), and, when their
    /// position is already at or past `eventID`, that position, which stays as it is — answered without queueing on
    /// the row lock (apps mark read whenever they show a conversation; the log's last id only grows, so the check
    /// holds). Throws ``InteractionError/notFound(_:)`` when `principal` may not see the interaction or is no session.
    func readCheck(through eventID: Int64, by principal: Principal, in id: UUID, on connection: PostgresConnection)
        async throws -> (role: Role, reader: String, unchanged: ReadPosition?) {
        guard let role = principal.role, let reader = principal.userID else { throw InteractionError.notFound(id) }
        guard let standing = try await standing(of: principal, in: id, on: connection) else {
            throw InteractionError.notFound(id)
        }
        let unchanged = eventID <= standing.lastSeq && eventID <= standing.position.readThrough
        return (role, reader, unchanged ? standing.position : nil)
    }

    /// CTEs that move the read position of `reader` on `side` in `interaction` to `through` when `when` holds and
    /// the position is behind it, as SQL; the last, `advanced`, has the position written (`read_through`,
    /// `messages_read`), or no row. The caller holds the interaction's row lock (every writer of positions takes it),
    /// and every event up to `through` must be in the statement's snapshot.
    ///
    /// The other side's messages the position covers are counted once, here, so that unread counts are a
    /// subtraction (see `unreadCount(of:side:reader:)`): a position that exists adds the messages between its old
    /// and new place (a look at the events it moves over), and only a reader's first position counts the log from
    /// the start. (Counting from the start at every move cost each read a look at every event before it.)
    static func positionMove(interaction: String, side: String, reader: String, through: String, when: String) -> String {
        let otherSidesMessages = """
            e.kind = '\(InteractionStore.Kind.message.rawValue)' AND e.payload->>'sender_role' <> \(side)
            """
        return """
            moved AS (
                UPDATE interaction_reads r SET read_through = \(through), updated_at = now(),
                    messages_read = r.messages_read + (SELECT count(*) FROM interaction_events e
                        WHERE e.interaction_id = \(interaction) AND \(otherSidesMessages)
                          AND e.seq > r.read_through AND e.seq <= \(through))
                WHERE r.interaction_id = \(interaction) AND r.reader_role = \(side) AND r.reader_id = \(reader)
                  AND r.read_through < \(through) AND \(when)
                RETURNING r.read_through, r.messages_read
            ), first AS (
                -- No position in the snapshot: the first one (or, should one have been written since, the upsert
                -- moves it, counting from the start).
                INSERT INTO interaction_reads (interaction_id, reader_role, reader_id, read_through, messages_read)
                SELECT \(interaction), \(side), \(reader), \(through),
                       (SELECT count(*) FROM interaction_events e
                        WHERE e.interaction_id = \(interaction) AND \(otherSidesMessages) AND e.seq <= \(through))
                WHERE \(when) AND NOT EXISTS (SELECT 1 FROM interaction_reads r
                    WHERE r.interaction_id = \(interaction) AND r.reader_role = \(side) AND r.reader_id = \(reader))
                ON CONFLICT (interaction_id, reader_role, reader_id) DO UPDATE
                    SET read_through = excluded.read_through, messages_read = excluded.messages_read, updated_at = now()
                    WHERE interaction_reads.read_through < excluded.read_through
                RETURNING read_through, messages_read
            ), advanced AS (
                SELECT read_through, messages_read FROM moved UNION ALL SELECT read_through, messages_read FROM first
            )
            """
    }

    /// The read position of the session `principal` in `id`, with the other side's messages after it.
    public func position(of principal: Principal, in id: UUID, on connection: PostgresConnection) async throws -> ReadPosition {
        guard let standing = try await standing(of: principal, in: id, on: connection) else {
            throw InteractionError.notFound(id)
        }
        return standing.position
    }

    /// The log's last id and `principal`'s read position in `id`, or nil when `principal` may not see it.
    private func standing(of principal: Principal, in id: UUID,
                          on connection: PostgresConnection) async throws -> (lastSeq: Int64, position: ReadPosition)? {
        let rows = try await connection.query("""
            SELECT i.last_seq, position.read_through,
                   \(InteractionStore.unreadCount(of: "i", side: "$4::text", reader: "$5::text")) AS unread_count
            FROM interactions i,
                 LATERAL (SELECT \(InteractionStore.readThrough(of: "i.id", side: "$4::text", reader: "$5::text")) AS read_through) position
            WHERE i.id = $1::uuid AND i.tenant_id = $2::uuid AND ($3::text IS NULL OR i.customer_id = $3)
            """, [id, principal.tenantID, InteractionStore.customerScope(principal)] + InteractionStore.perspective(principal))
        guard let row = rows.first else { return nil }
        return (try row.decode("last_seq"), ReadPosition(readThrough: try row.decode("read_through"),
                                                         unreadCount: try row.decode("unread_count")))
    }
}
