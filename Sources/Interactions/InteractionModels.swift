import Foundation

/// An interaction as the API shows it.
public struct Interaction: Sendable, Codable, Equatable {
    public var id: String
    public var customerID: String
    public var subject: String?
    public var state: InteractionState
    public var failureReason: String?
    public var createdAt: Date
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
    public var seq: Int64
    public var id: String
    public var senderID: String
    public var senderRole: String
    public var text: String
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
