import Accounts
import Foundation
import HTTPServer
import Postgres

/// Interactions and their event log in Postgres. Every change appends its event in the same transaction, under
/// the interaction's row lock, so one interaction's events commit in `seq` order; `seq` counts within the
/// interaction (1, 2, 3…, no gaps). Each commit sends a notice (`<interaction id>:<seq>`, ids only) to every replica.
public struct InteractionStore: Sendable {
    /// The NOTIFY channel of interaction events.
    public static let channel = "switchboard_interactions"

    /// A store; queries run on the connections handed to each method (so callers choose the transaction).
    public init() {}

    static let columns = "id, customer_id, subject, state, failure_reason, created_at, ended_at"

    /// Opens an interaction for the customer `principal`.
    public func create(subject: String?, for principal: Principal, on connection: PostgresConnection) async throws -> Interaction {
        let rows = try await connection.query("""
            INSERT INTO interactions (tenant_id, customer_id, subject) VALUES ($1::uuid, $2, $3)
            RETURNING \(InteractionStore.columns)
            """, [principal.tenantID, principal.userID ?? "", subject])
        let interaction = try InteractionStore.interaction(rows[0])
        try await append(.state, ["state": "started"], to: UUID(uuidString: interaction.id)!, on: connection)
        return interaction
    }

    /// The interaction if `principal` may see it: agents see all of their tenant's, customers their own.
    /// With `lock`, the row is locked for the rest of the transaction (writers take it before appending).
    public func find(_ id: UUID, for principal: Principal, lock: Bool = false,
                     on connection: PostgresConnection) async throws -> Interaction? {
        let rows = try await connection.query("""
            SELECT \(InteractionStore.columns) FROM interactions
            WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
            \(lock ? "FOR UPDATE" : "")
            """, [id, principal.tenantID, InteractionStore.customerScope(principal)])
        return try rows.first.map(InteractionStore.interaction)
    }

    /// Where the log of `id` stands, if `principal` may see the interaction: its last `seq` and whether it is over.
    public func logPosition(of id: UUID, for principal: Principal,
                            on connection: PostgresConnection) async throws -> (lastSeq: Int64, isOver: Bool)? {
        let rows = try await connection.query("""
            SELECT last_seq, state <> 'started' AS over FROM interactions
            WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
            """, [id, principal.tenantID, InteractionStore.customerScope(principal)])
        guard let row = rows.first else { return nil }
        return (try row.decode("last_seq"), try row.decode("over"))
    }

    /// A page of interactions visible to `principal`, newest first, optionally in one state; each with the
    /// cursor that continues after it.
    public func list(for principal: Principal, state: InteractionState?, limit: Int, after cursor: KeysetCursor?,
                     on connection: PostgresConnection) async throws -> [(Interaction, KeysetCursor)] {
        let rows = try await connection.query("""
            SELECT \(InteractionStore.columns), (extract(epoch FROM created_at) * 1000000)::bigint AS created_micros
            FROM interactions
            WHERE tenant_id = $1::uuid AND ($2::text IS NULL OR customer_id = $2) AND ($3::text IS NULL OR state = $3)
              AND ($4::bigint IS NULL OR (created_at, id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid))
            ORDER BY created_at DESC, id DESC LIMIT $6
            """, [principal.tenantID, InteractionStore.customerScope(principal), state?.rawValue,
                  cursor?.micros, cursor?.id, limit])
        return try rows.map { row in
            (try InteractionStore.interaction(row), KeysetCursor(micros: try row.decode("created_micros"), id: try row.decode("id")))
        }
    }

    /// Moves an open interaction to `state` (ended or failed) and logs it.
    public func close(_ id: UUID, as state: InteractionState, reason: String?, on connection: PostgresConnection) async throws -> Interaction {
        let rows = try await connection.query("""
            UPDATE interactions SET state = $2, failure_reason = $3, ended_at = now() WHERE id = $1::uuid
            RETURNING \(InteractionStore.columns)
            """, [id, state.rawValue, reason])
        let payload: [String: String?] = ["state": state.rawValue, "failure_reason": reason]
        try await append(.state, payload, to: id, on: connection)
        return try InteractionStore.interaction(rows[0])
    }

    /// Appends a message; returns it with its sequence number.
    public func addMessage(_ text: String, from principal: Principal, to id: UUID,
                           on connection: PostgresConnection) async throws -> InteractionMessage {
        let messageID = UUID().uuidString.lowercased()
        let payload: [String: String?] = ["id": messageID, "sender_id": principal.userID,
                                          "sender_role": principal.role?.rawValue, "text": text]
        let (seq, createdAt) = try await append(.message, payload, to: id, on: connection)
        return InteractionMessage(seq: seq, id: messageID, senderID: principal.userID ?? "",
                                  senderRole: principal.role?.rawValue ?? "", text: text, createdAt: createdAt)
    }

    /// Logs a media state change.
    public func setMedia(_ kind: MediaKind, _ state: MediaState, from principal: Principal, on id: UUID,
                         on connection: PostgresConnection) async throws -> Int64 {
        let payload: [String: String?] = ["kind": kind.rawValue, "state": state.rawValue, "sender_id": principal.userID,
                                          "sender_role": principal.role?.rawValue]
        return try await append(.media, payload, to: id, on: connection).seq
    }

    /// A page of messages in order, after sequence number `after`.
    public func messages(of id: UUID, after: Int64?, limit: Int, on connection: PostgresConnection) async throws -> [InteractionMessage] {
        let rows = try await connection.query("""
            SELECT seq, payload->>'id' AS id, payload->>'sender_id' AS sender_id, payload->>'sender_role' AS sender_role,
                   payload->>'text' AS text, created_at
            FROM interaction_events WHERE interaction_id = $1::uuid AND kind = 'message' AND seq > coalesce($2::bigint, 0)
            ORDER BY seq LIMIT $3
            """, [id, after, limit])
        return try rows.map { row in
            InteractionMessage(seq: try row.decode("seq"), id: try row.decode("id"), senderID: try row.decode("sender_id"),
                               senderRole: try row.decode("sender_role"), text: try row.decode("text"),
                               createdAt: try row.decode("created_at"))
        }
    }

    /// Kinds of logged events.
    public enum Kind: String, Sendable { case state, message, media }

    @discardableResult
    func append(_ kind: Kind, _ payload: [String: String?], to id: UUID,
                on connection: PostgresConnection) async throws -> (seq: Int64, createdAt: Date) {
        let json = try JSONSerialization.data(withJSONObject: payload.mapValues { $0 ?? NSNull() as Any }, options: [.sortedKeys])
        // The next id of this interaction's log, taken under its row lock (held to commit): no gaps, commit order.
        let rows = try await connection.query("""
            WITH next AS (UPDATE interactions SET last_seq = last_seq + 1 WHERE id = $1::uuid RETURNING last_seq)
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT $1::uuid, last_seq, $2, $3::jsonb FROM next
            RETURNING seq, created_at
            """, [id, kind.rawValue, String(decoding: json, as: UTF8.self)])
        let seq: Int64 = try rows[0].decode("seq")
        try await announce(.stored(id, seq: seq), on: connection)
        return (seq, try rows[0].decode("created_at"))
    }

    /// Tells every replica's subscribers of `id` that `principal` started or stopped typing (not stored).
    func announceTyping(_ isTyping: Bool, by principal: Principal, in id: UUID, on connection: PostgresConnection) async throws {
        try await announce(.typing(id, isTyping: isTyping, role: principal.role?.rawValue ?? "-", user: principal.userID ?? ""),
                           on: connection)
    }

    /// Sends `notice` on the channel; delivered when the connection's transaction commits.
    private func announce(_ notice: InteractionNotice, on connection: PostgresConnection) async throws {
        _ = try await connection.query("SELECT pg_notify($1, $2)", [InteractionStore.channel, notice.payload])
    }

    /// Customers are limited to their own interactions; agents (and the tenant's backend) see all.
    static func customerScope(_ principal: Principal) -> String? {
        principal.role == .customer ? principal.userID : nil
    }

    static func interaction(_ row: PostgresRow) throws -> Interaction {
        Interaction(id: (try row.decode("id", as: UUID.self)).uuidString.lowercased(), customerID: try row.decode("customer_id"),
                    subject: try row.decode("subject"),
                    state: InteractionState(rawValue: try row.decode("state")) ?? .failed,
                    failureReason: try row.decode("failure_reason"), createdAt: try row.decode("created_at"),
                    endedAt: try row.decode("ended_at"))
    }
}
