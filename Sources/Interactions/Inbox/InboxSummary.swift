import Foundation
import HTTPServer
import Postgres

/// An interaction as one read gives it to every inbox stream of its tenant: what `GET /v1/interactions/{id}` shows,
/// with the counters and read positions from which each agent's own `unread_count` is a subtraction (no count per
/// watcher), and the preview of its latest message or note.
struct InboxSummary: Sendable {
    let id: UUID
    let tenantID: UUID
    let customerID: String
    let subject: String?
    let state: InteractionState
    let failureReason: String?
    let createdAt: Date
    let endedAt: Date?
    let assignedAgentID: String?
    /// The customer's messages so far.
    let customerMessages: Int64
    /// How far the customer has read (an agent's `read_by_other_through`).
    let customerReadThrough: Int64
    /// Per agent who has read: the customer's messages their position covers.
    let agentReads: [String: Int64]
    let lastMessage: LastMessage?

    /// The latest message or note, as an agent's inbox previews it.
    struct LastMessage: Sendable, Codable, Equatable {
        let id: String
        let kind: String
        /// Cut at 200 characters.
        let text: String
        let senderRole: String
        let createdMicros: Int64

        enum CodingKeys: String, CodingKey {
            case id, kind, text
            case senderRole = "sender_role", createdMicros = "created_micros"
        }
    }

    /// The interaction as `agent` sees it through `GET /v1/interactions/{id}`.
    func interaction(for agent: String) -> Interaction {
        interaction(unread: unreadCount(for: agent))
    }

    /// The customer's messages after `agent`'s read position.
    func unreadCount(for agent: String) -> Int64 { customerMessages - (agentReads[agent] ?? 0) }

    /// The interaction as an agent with `unread` unread messages sees it (the only part that differs by agent).
    func interaction(unread: Int64) -> Interaction {
        Interaction(id: id.lowercased, customerID: customerID, subject: subject, state: state, failureReason: failureReason,
                    createdAt: createdAt, endedAt: endedAt, assignedAgentID: assignedAgentID,
                    unreadCount: unread, readByOtherThrough: customerReadThrough)
    }

    /// The select list of a summary of interaction row `i`.
    static let columns = """
        i.id, i.tenant_id, i.customer_id, i.subject, i.state, i.failure_reason, i.created_at, i.ended_at,
        i.assigned_agent_id, i.customer_messages, i.inbox_preview::text AS preview,
        coalesce((SELECT max(r.read_through) FROM interaction_reads r
                  WHERE r.interaction_id = i.id AND r.reader_role = 'customer'), 0) AS customer_read_through,
        (SELECT jsonb_object_agg(r.reader_id, r.messages_read) FROM interaction_reads r
         WHERE r.interaction_id = i.id AND r.reader_role = 'agent')::text AS agent_reads
        """

    init(_ row: PostgresRow) throws {
        id = try row.decode("id")
        tenantID = try row.decode("tenant_id")
        customerID = try row.decode("customer_id")
        subject = try row.decode("subject")
        state = InteractionState(rawValue: try row.decode("state")) ?? .failed
        failureReason = try row.decode("failure_reason")
        createdAt = try row.decode("created_at")
        endedAt = try row.decode("ended_at")
        assignedAgentID = try row.decode("assigned_agent_id")
        customerMessages = try row.decode("customer_messages")
        customerReadThrough = try row.decode("customer_read_through")
        let reads: String? = try row.decode("agent_reads")
        agentReads = try reads.map { try JSON.decode([String: Int64].self, from: Array($0.utf8)) } ?? [:]
        let preview: String? = try row.decode("preview")
        lastMessage = try preview.map { try JSON.decode(LastMessage.self, from: Array($0.utf8)) }
    }
}

/// The data of an inbox `interaction` event: the interaction as the watching agent sees it, its `last_message`, and
/// whether it is (still) in the stream's view.
struct InboxEntry: Encodable {
    let interaction: Interaction
    let lastMessage: InboxSummary.LastMessage?
    let inView: Bool

    private enum CodingKeys: String, CodingKey { case lastMessage = "last_message", inView = "in_view" }
    private enum PreviewKeys: String, CodingKey { case id, kind, text, senderRole = "sender_role", createdAt = "created_at" }

    func encode(to encoder: any Encoder) throws {
        try interaction.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(inView, forKey: .inView)
        guard let lastMessage else {
            try container.encodeNil(forKey: .lastMessage)
            return
        }
        var preview = container.nestedContainer(keyedBy: PreviewKeys.self, forKey: .lastMessage)
        try preview.encode(lastMessage.id, forKey: .id)
        try preview.encode(lastMessage.kind, forKey: .kind)
        try preview.encode(lastMessage.text, forKey: .text)
        try preview.encode(lastMessage.senderRole, forKey: .senderRole)
        try preview.encode(RFC3339.string(microsecondsSince1970: lastMessage.createdMicros), forKey: .createdAt)
    }
}

/// A note as inbox streams deliver it, with what their filters need of its interaction.
struct InboxNote: Sendable {
    let note: InteractionNote
    let interactionID: UUID
    let tenantID: UUID
    let state: InteractionState
    let assignedAgentID: String?

    init(_ row: PostgresRow) throws {
        note = try InteractionStore.note(row)
        interactionID = try row.decode("interaction_id")
        tenantID = try row.decode("tenant_id")
        state = InteractionState(rawValue: try row.decode("state")) ?? .failed
        assignedAgentID = try row.decode("assigned_agent_id")
    }

    /// The data of its `note` event: the note and its interaction's id.
    struct Event: Encodable {
        let interactionID: String
        let note: InteractionNote

        private enum CodingKeys: String, CodingKey { case interactionID = "interaction_id" }

        func encode(to encoder: any Encoder) throws {
            try note.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(interactionID, forKey: .interactionID)
        }
    }
}
