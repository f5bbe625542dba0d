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

    enum CodingKeys: String, CodingKey {
        case id, subject, state
        case customerID = "customer_id", failureReason = "failure_reason", createdAt = "created_at", endedAt = "ended_at"
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
    }
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

    enum CodingKeys: String, CodingKey {
        case seq, id, text
        case senderID = "sender_id", senderRole = "sender_role", createdAt = "created_at"
    }
}

/// Media kinds and states an interaction may report.
public enum MediaKind: String, Sendable, Codable, CaseIterable { case audio, video, screen }
/// The state of one medium.
public enum MediaState: String, Sendable, Codable, CaseIterable { case requested, active, ended }
