import Accounts
import Crypto
import Foundation
import HTTPServer

/// An endpoint as the API shows it. The secret appears only in the answers to its creation and rotation.
public struct WebhookEndpoint: Sendable, Encodable, Equatable {
    /// The endpoint's id (a lower-case UUID).
    public var id: String
    /// Where deliveries are POSTed.
    public var url: String
    /// The event types it receives.
    public var events: [String]
    /// Whether deliveries are stopped (by the tenant, by a `410 Gone`, or after a whole retry schedule failed).
    public var disabled: Bool
    /// Why it is disabled, for the tenant to read; nil while enabled.
    public var disabledReason: String?
    /// When it was disabled; nil while enabled.
    public var disabledAt: Date?
    /// Until when the secret replaced by the last rotation still signs too; nil when only one secret signs.
    public var previousSecretExpiresAt: Date?
    /// When it was created.
    public var createdAt: Date
    /// When it was last changed.
    public var updatedAt: Date
    /// The signing secret (`whsec_…`): set only in the answers to creation and rotation.
    public var secret: String?

    enum CodingKeys: String, CodingKey {
        case id, url, events, disabled, secret
        case disabledReason = "disabled_reason", disabledAt = "disabled_at",
             previousSecretExpiresAt = "previous_secret_expires_at", createdAt = "created_at", updatedAt = "updated_at"
    }

    /// Encodes absent optionals as null (the secret is left out unless set), so every endpoint has one shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(url, forKey: .url)
        try container.encode(events, forKey: .events)
        try container.encode(disabled, forKey: .disabled)
        try container.encode(disabledReason, forKey: .disabledReason)
        try container.encode(disabledAt, forKey: .disabledAt)
        try container.encode(previousSecretExpiresAt, forKey: .previousSecretExpiresAt)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encodeIfPresent(secret, forKey: .secret)
    }
}

/// One delivery attempt as the attempt log shows it.
public struct WebhookAttempt: Sendable, Encodable, Equatable {
    /// The attempt's id.
    public var id: String
    /// The message's `webhook-id` (the same on every attempt of one message).
    public var webhookID: String
    /// The message's event type.
    public var eventType: String
    /// 1 for the first attempt, 2 for the first retry… (a redelivery starts again at 1).
    public var attempt: Int
    /// `delivered`, `http_error`, `gone`, `timeout`, `network_error` or `refused`.
    public var outcome: String
    /// The endpoint's answer status; nil when none came.
    public var responseStatus: Int?
    /// How long the attempt took, in milliseconds.
    public var latencyMS: Int
    /// What went wrong; nil when delivered.
    public var error: String?
    /// When the attempt started.
    public var attemptedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, attempt, outcome, error
        case webhookID = "webhook_id", eventType = "event_type", responseStatus = "response_status",
             latencyMS = "latency_ms", attemptedAt = "attempted_at"
    }

    /// Encodes absent optionals as null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(webhookID, forKey: .webhookID)
        try container.encode(eventType, forKey: .eventType)
        try container.encode(attempt, forKey: .attempt)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(responseStatus, forKey: .responseStatus)
        try container.encode(latencyMS, forKey: .latencyMS)
        try container.encode(error, forKey: .error)
        try container.encode(attemptedAt, forKey: .attemptedAt)
    }
}

/// `webhook-id` values: `msg_` and the message's UUID as 32 hex digits.
public enum WebhookID {
    /// The `webhook-id` of message `id`.
    public static func text(_ id: UUID) -> String {
        // From the bytes, into the string's storage: removing the hyphens with `replacingOccurrences` went through
        // NSString, 6 % of a delivery's CPU.
        String(unsafeUninitializedCapacity: 36) { out in
            for (index, byte) in "msg_".utf8.enumerated() { out[index] = byte }
            return 4 + withUnsafeBytes(of: id.uuid) { Base16.write($0, into: UnsafeMutableBufferPointer(rebasing: out[4...])) }
        }
    }

    /// The message id of a `webhook-id`; nil when it is not one.
    public static func message(_ text: String) -> UUID? {
        guard text.hasPrefix("msg_") else { return nil }
        let hex = Array(text.utf8.dropFirst(4))
        guard hex.count == 32, hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else { return nil }
        let h = String(decoding: hex, as: UTF8.self)
        func part(_ from: Int, _ count: Int) -> Substring { h.dropFirst(from).prefix(count) }
        return UUID(uuidString: "\(part(0, 8))-\(part(8, 4))-\(part(12, 4))-\(part(16, 4))-\(part(20, 12))")
    }
}

/// A message claimed for one attempt, with what signing and sending it needs.
struct ClaimedMessage: Sendable {
    let id: UUID
    let endpointID: UUID
    let interactionID: UUID
    let eventSeq: Int64
    let eventType: String
    let body: [UInt8]
    let attempt: Int
    let url: String
    let secrets: [WebhookSecret]
    let createdAt: Date

    /// The queue the message heads.
    var queue: QueueKey { QueueKey(endpointID: endpointID, interactionID: interactionID) }
}
