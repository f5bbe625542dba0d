import Foundation

/// An interaction as the API shows it.
public struct Interaction: Sendable, Codable, Equatable {
    /// The interaction's id (a lower-case UUID).
    public var id: String
    /// The user id of the customer who opened it (their session's `user_id`).
    public var customerID: String
    /// What it is about, as the customer gave it; nil when they gave none.
    public var subject: String?
    /// Where it is in its life: `started`, then `ended` or `failed`.
    public var state: InteractionState
    /// Why it failed, as the agent gave it; nil unless `state` is `failed`.
    public var failureReason: String?
    /// When it was opened.
    public var createdAt: Date
    /// When it ended or failed; nil while it is `started`.
    public var endedAt: Date?
    /// The user id of the agent handling it; nil while nobody is assigned.
    public var assignedAgentID: String?
    /// Messages of the other side after the caller's read position (for a customer, agents' messages; for an agent,
    /// the customer's). Computed for whoever asked, so the same interaction shows different counts to different callers.
    public var unreadCount: Int64
    /// How far the other side has read: for a customer, the furthest position among agents; for an agent, the
    /// customer's. 0 when the other side has read nothing.
    public var readByOtherThrough: Int64
    /// For a customer: how many of the tenant's agents are online now (absent for agents).
    public var agentsOnline: Int64?

    enum CodingKeys: String, CodingKey {
        case id, subject, state
        case customerID = "customer_id", failureReason = "failure_reason", createdAt = "created_at", endedAt = "ended_at"
        case assignedAgentID = "assigned_agent_id", unreadCount = "unread_count", readByOtherThrough = "read_by_other_through"
        case agentsOnline = "agents_online"
    }

    /// Encodes every optional as null when absent, so every interaction has the same shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(customerID, forKey: .customerID)
        try container.encode(subject, forKey: .subject)
        try container.encode(state, forKey: .state)
        try container.encode(failureReason, forKey: .failureReason)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(endedAt, forKey: .endedAt)
        try container.encode(assignedAgentID, forKey: .assignedAgentID)
        try container.encode(unreadCount, forKey: .unreadCount)
        try container.encode(readByOtherThrough, forKey: .readByOtherThrough)
        try container.encodeIfPresent(agentsOnline, forKey: .agentsOnline)
    }
}

/// Where a reader stands in an interaction, as `POST /v1/interactions/{id}/read` answers.
public struct ReadPosition: Sendable, Codable, Equatable {
    /// The caller's read position: the highest event id they marked read (it never moves backwards); 0 for none.
    public var readThrough: Int64
    /// Messages of the other side after `readThrough`.
    public var unreadCount: Int64

    enum CodingKeys: String, CodingKey { case readThrough = "read_through", unreadCount = "unread_count" }
}

/// A message of an interaction (stored as a `message` event; `seq` orders them).
public struct InteractionMessage: Sendable, Codable, Equatable {
    /// The message's place in the interaction's event log (also its SSE event id).
    public var seq: Int64
    /// The message's id (a lower-case UUID).
    public var id: String
    /// The user id of the session that sent it.
    public var senderID: String
    /// The sender's role: `customer` or `agent`.
    public var senderRole: String
    /// The text, as sent.
    public var text: String
    /// When it was stored.
    public var createdAt: Date
    /// The files sent with it (their metadata), if any.
    public var attachments: [Attachment]?
    /// `true` when an erasure removed its text (now `""`) and files; absent otherwise.
    public var redacted: Bool? = nil

    enum CodingKeys: String, CodingKey {
        case seq, id, text, attachments, redacted
        case senderID = "sender_id", senderRole = "sender_role", createdAt = "created_at"
    }
}

/// Media kinds and states an interaction may report.
public enum MediaKind: String, Sendable, Codable, CaseIterable { case audio, video, screen }
/// The state of one medium.
public enum MediaState: String, Sendable, Codable, CaseIterable { case requested, active, ended }
