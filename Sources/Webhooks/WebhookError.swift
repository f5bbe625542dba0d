import Foundation

/// Why the webhooks domain refused an operation. The store and routes throw it; the routes' one mapping turns it into
/// a problem response (`WebhookProblems.swift`).
public enum WebhookError: Error, Sendable, Equatable {
    /// No endpoint by this id among the tenant's; nil when the id is not even a UUID.
    case noSuchEndpoint(UUID?)
    /// No webhook message by this `webhook_id` among the tenant's.
    case noSuchMessage(String)
    /// The tenant already has `limit` endpoints.
    case endpointLimit(Int)
}
