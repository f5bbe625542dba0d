import Accounts
import Foundation
import Postgres

extension InteractionStore {
    /// A message without attachments appended in one statement that is its own transaction: the interaction's row is
    /// taken by the update (which waits for a writer holding it, then sees its state as that writer left it), the
    /// event, its change for inbox streams and its notice go with it, and the row lock is held until the statement
    /// commits — the guarantees of ``lock(_:for:allowing:on:)`` then ``addMessage(_:attachments:from:to:on:)`` in a
    /// transaction, in one round trip instead of five. `connection` must not be in a transaction.
    public func addMessageAlone(_ text: String, from principal: Principal, to id: UUID,
                                on connection: PostgresConnection) async throws -> InteractionMessage {
        let messageID = UUID().lowercased
        let payload: [String: String?] = ["id": messageID, "sender_id": principal.userID,
                                          "sender_role": principal.role?.rawValue, "text": text]
        let rows = try await connection.query(InteractionStore.messageAloneStatement, [
            id, principal.tenantID, InteractionStore.customerScope(principal), try InteractionStore.payloadJSON(payload),
        ])
        guard let row = rows.first, let state = try row.decode("state", as: String?.self) else {
            throw InteractionError.notFound(id)
        }
        guard let seq = try row.decode("seq", as: Int64?.self) else {
            // Not appended: the interaction is over — as its row says now, which the statement's snapshot may not
            // have seen (it ended while this statement waited for its row).
            let now = try await connection.query("SELECT state FROM interactions WHERE id = $1::uuid", [id])
            let current = InteractionState(rawValue: try now.first?.decode("state", as: String.self) ?? state) ?? .failed
            throw InteractionError.notAllowed(.message, id: id, state: current)
        }
        return InteractionMessage(seq: seq, id: messageID, senderID: principal.userID ?? "",
                                  senderRole: principal.role?.rawValue ?? "", text: text,
                                  createdAt: try row.decode("created_at"), attachments: nil)
    }

    /// Interaction `$1` of tenant `$2` (of customer `$3` when not null) gets message payload `$4` appended if it is
    /// still `started`, with what ``appendStatement`` keeps, and its notice; answers the state the statement's
    /// snapshot saw (null: no such interaction for this caller) and the new event's `seq` and time (null: not
    /// appended, the interaction is over).
    static let messageAloneStatement = PreparedStatement("""
        WITH target AS (
            SELECT id, state FROM interactions
            WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
        ), next AS (
            UPDATE interactions SET \(nextEvent(payload: "$4::jsonb", isMessage: "true"))
            WHERE id = (SELECT id FROM target) AND state = '\(InteractionState.started.rawValue)'
            RETURNING last_seq, tenant_id
        ), changed AS (
            INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next
        ), appended AS (
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT $1::uuid, last_seq, '\(Kind.message.rawValue)', $4::jsonb FROM next
            RETURNING seq, created_at
        )
        SELECT (SELECT state FROM target) AS state, a.seq, a.created_at,
               CASE WHEN a.seq IS NOT NULL THEN pg_notify('\(InteractionStore.channel)', $1::text || ':' || a.seq) END AS notified
        FROM (SELECT 1) AS one LEFT JOIN appended a ON true
        """)
}
