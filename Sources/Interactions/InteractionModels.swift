import Foundation

/// An interaction as the API shows it.
public struct Interaction: Sendable, Codable, Equatable {
    public var id: String
    public var customer_id: String
    public var subject: String?
    public var state: InteractionState
    public var failure_reason: String?
    public var created_at: Date
    public var ended_at: Date?

    /// Encodes every optional as null when absent, so every interaction has the same shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(customer_id, forKey: .customer_id)
        try container.encode(subject, forKey: .subject)
        try container.encode(state, forKey: .state)
        try container.encode(failure_reason, forKey: .failure_reason)
        try container.encode(created_at, forKey: .created_at)
        try container.encode(ended_at, forKey: .ended_at)
    }
}

/// A message of an interaction (stored as a `message` event; `seq` orders them).
public struct InteractionMessage: Sendable, Codable, Equatable {
    public var seq: Int64
    public var id: String
    public var sender_id: String
    public var sender_role: String
    public var text: String
    public var created_at: Date
}

/// Media kinds and states an interaction may report.
public enum MediaKind: String, Sendable, Codable, CaseIterable { case audio, video, screen }
/// The state of one medium.
public enum MediaState: String, Sendable, Codable, CaseIterable { case requested, active, ended }
