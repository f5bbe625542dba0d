import Accounts
import Coordination
import Foundation
import Postgres

/// An agent's private note on an interaction: agents see it; customers never do (not in their streams, messages,
/// unread counts or read positions).
public struct InteractionNote: Sendable, Codable, Equatable {
    /// The note's id (a lower-case UUID).
    public var id: String
    /// Its number among the interaction's notes (1, 2, 3…), apart from the log's event ids.
    public var noteSeq: Int64
    /// The agent who wrote it.
    public var authorID: String
    /// The text, as written.
    public var text: String
    /// The interaction's last event id when the note was written: agents' streams place it after that event.
    public var afterSeq: Int64
    /// When it was stored.
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, text
        case noteSeq = "note_seq", authorID = "author_id", afterSeq = "after_seq", createdAt = "created_at"
    }
}

extension InteractionStore {
    /// Adds a note by the agent `principal` to `id` (in any state: wrap-up notes come after the end), under the
    /// interaction's row lock; it becomes the inbox's preview and a change for inbox streams. Throws
    /// ``InteractionError/notFound(_:)`` when `principal` may not see the interaction.
    public func addNote(_ text: String, by principal: Principal, to id: UUID,
                        on connection: PostgresConnection) async throws -> InteractionNote {
        guard principal.role == .agent, let author = principal.userID,
              try await lock(id, for: principal, on: connection) != nil else { throw InteractionError.notFound(id) }
        // Two statements, so that the note's change number comes after its interaction's (see `InboxPosition`).
        let changed = try await connection.query(InteractionStore.noteChangeStatement, [id, RandomUUID.make().lowercased, text])
        let rows = try await connection.query(InteractionStore.noteStatement, [
            id, changed[0].decode("tenant_id", as: UUID.self), author, text,
            changed[0].decode("note_seq", as: Int64.self), changed[0].decode("last_seq", as: Int64.self),
            changed[0].decode("note_id", as: String.self),
        ])
        let note = try InteractionStore.note(rows[0])
        try await announce(.note(id, noteSeq: note.noteSeq), on: connection)
        return note
    }

    /// Takes the next note number of interaction `$1` for note `$2` (text `$3`), makes it the inbox preview, and
    /// records the interaction's change.
    static let noteChangeStatement = PreparedStatement("""
        WITH next AS (
            UPDATE interactions SET last_note_seq = last_note_seq + 1,
                inbox_preview = \(InboxMigrations.preview(id: "$2::text", kind: "'note'", text: "$3::text",
                                                          role: "'agent'", at: "now()"))
            WHERE id = $1::uuid RETURNING last_note_seq, last_seq, tenant_id),
        changed AS (INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next)
        SELECT tenant_id, last_note_seq AS note_seq, last_seq, $2::text AS note_id FROM next
        """)

    /// Stores the note: interaction `$1` of tenant `$2`, by `$3`, text `$4`, number `$5`, after event `$6`, id `$7`.
    static let noteStatement = PreparedStatement("""
        INSERT INTO interaction_notes (interaction_id, tenant_id, author_id, text, note_seq, after_seq, id)
        VALUES ($1::uuid, $2::uuid, $3::text, $4::text, $5::bigint, $6::bigint, $7::uuid)
        RETURNING id, note_seq, author_id, text, after_seq, created_at
        """)

    /// A page of `id`'s notes in order, after note number `after`.
    public func notes(of id: UUID, after: Int64?, limit: Int, on connection: PostgresConnection) async throws -> [InteractionNote] {
        let rows = try await connection.query("""
            SELECT id, note_seq, author_id, text, after_seq, created_at FROM interaction_notes
            WHERE interaction_id = $1::uuid AND note_seq > coalesce($2::bigint, 0) ORDER BY note_seq LIMIT $3
            """, [id, after, limit])
        return try rows.map(InteractionStore.note)
    }

    static func note(_ row: PostgresRow) throws -> InteractionNote {
        InteractionNote(id: try row.decode("id", as: UUID.self).lowercased, noteSeq: try row.decode("note_seq"),
                        authorID: try row.decode("author_id"), text: try row.decode("text"),
                        afterSeq: try row.decode("after_seq"), createdAt: try row.decode("created_at"))
    }
}
