/// The event types an endpoint may subscribe to, and the stored interaction events they come from.
public enum WebhookEventType: String, Sendable, Codable, CaseIterable {
    /// An interaction was opened (a `state` event with state `started`).
    case interactionStarted = "interaction.started"
    /// A message was sent (a `message` event); `data.sender_role` tells customers' from agents'.
    case messageCreated = "message.created"
    /// An agent was assigned (an `assignment` event).
    case interactionAssigned = "interaction.assigned"
    /// Someone read up to a point (a `read` event).
    case interactionRead = "interaction.read"
    /// An interaction ended (a `state` event with state `ended`).
    case interactionEnded = "interaction.ended"
    /// An interaction failed (a `state` event with state `failed`).
    case interactionFailed = "interaction.failed"
}
