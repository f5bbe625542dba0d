import Foundation

/// Where an interaction is in its life: `started`, then `ended` or `failed`, for good.
public enum InteractionState: String, Sendable, Codable, CaseIterable {
    case started
    case ended
    case failed

    /// Whether messages, typing and media may still happen.
    public var isOpen: Bool { self == .started }

    /// What a request wants to do to an interaction.
    public enum Action: Sendable, Equatable {
        case message
        case typing
        case media
        case end
        case fail
        /// Claim, assign or unassign.
        case assign
    }

    /// The state after `action`, or nil when the action is not allowed in this state (→ 409).
    public func after(_ action: Action) -> InteractionState? {
        guard isOpen else { return nil }
        switch action {
        case .message, .typing, .media, .assign: return .started
        case .end: return .ended
        case .fail: return .failed
        }
    }
}

extension InteractionState {
    /// Whether the interaction is over (`ended` or `failed`): nothing follows its final `state` event.
    public var isOver: Bool { !isOpen }

    /// The state after `action` on interaction `id`; throws ``InteractionError/notAllowed(_:id:state:)`` when this
    /// state forbids it.
    public func allowing(_ action: Action, on id: UUID) throws(InteractionError) -> InteractionState {
        guard let next = after(action) else { throw .notAllowed(action, id: id, state: self) }
        return next
    }
}
