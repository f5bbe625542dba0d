import Interactions

/// The event types an endpoint may subscribe to, and the stored interaction events they come from (``source``: the
/// one mapping; the outbox trigger's SQL is generated from it, see ``mappingFunctionSQL``). Two types come from
/// elsewhere: a note (`interaction_notes`) and an agent's status change (`agent_presence`), each queued by a
/// trigger of its own.
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
    /// An agent wrote a private note (never a `message.created`).
    case noteCreated = "note.created"
    /// An agent's status changed (online, away, offline): no interaction's event.
    case agentStatusChanged = "agent.status_changed"

    /// The stored interaction event a type comes from: its kind and, for `state` events, the state entered (nil:
    /// any payload); nil for the types that do not come from the interactions' event log.
    public var source: (kind: InteractionStore.Kind, state: InteractionState?)? {
        switch self {
        case .interactionStarted: (.state, .started)
        case .messageCreated: (.message, nil)
        case .interactionAssigned: (.assignment, nil)
        case .interactionRead: (.read, nil)
        case .interactionEnded: (.state, .ended)
        case .interactionFailed: (.state, .failed)
        case .noteCreated, .agentStatusChanged: nil
        }
    }

    /// The type of a stored event of `kind` whose payload's `state` is `state`; nil when no endpoint can subscribe
    /// to it (a `media` event, an unknown kind or state).
    public init?(kind: String, state: String?) {
        guard let type = WebhookEventType.allCases.first(where: { type in
            guard let source = type.source else { return false }
            return source.kind.rawValue == kind && (source.state == nil || source.state?.rawValue == state)
        }) else { return nil }
        self = type
    }
}
