import Foundation

/// One thing that happened in an interaction, as ``SwitchboardClient/events(for:)`` delivers it.
///
/// Stored events (state, message, media, read, assignment) arrive exactly once and in `seq` order, across reconnects.
/// Typing is not stored: an indicator missed while disconnected is not replayed, and it expires on its own.
public enum InteractionEvent: Sendable, Equatable {
    /// The interaction's state: first a snapshot (``StateChange/isSnapshot``), then every change.
    /// After `ended` or `failed` the stream finishes.
    case state(StateChange)
    /// A message from the customer or an agent, with the files it carries (``Message/attachments``).
    case message(Message)
    /// A media state change (a call requested, a screen share ended…).
    case media(MediaChange)
    /// Someone started or stopped typing.
    case typing(TypingIndicator)
    /// Someone's read position advanced (the other side's tells the app which messages were seen).
    case read(ReadReceipt)
    /// The interaction was claimed, assigned to another agent, or unassigned.
    case assignment(AssignmentChange)
    /// The user's data was erased: these events (messages already delivered) now have their text removed. Drop
    /// them from the screen and from anything the app keeps; a resumed stream or a reload shows them redacted
    /// (``Message/isRedacted``). Not stored, so it may come after the interaction's final state.
    case redacted(Redaction)
    /// The server refused the stream (the interaction does not exist for this user, the session was revoked…);
    /// it is the stream's last element. Open a new stream with ``SwitchboardClient/events(for:)`` once fixed.
    case refused(APIProblem)

    /// An interaction's state at one point of its log.
    public struct StateChange: Sendable, Equatable {
        /// The log position this state is current at.
        public let seq: Int64
        /// The interaction's state from this event on.
        public let state: Interaction.State
        /// Why the interaction failed; nil unless `state` is `failed`.
        public let failureReason: String?
        /// Set on the snapshot only.
        public let subject: String?
        /// Whether this is the current state sent when the stream opened, rather than a change as it happened.
        public let isSnapshot: Bool
        /// When the change happened; `nil` for a snapshot.
        public let createdAt: Date?

        /// Whether the interaction is over: nothing follows this event.
        public var isFinal: Bool { state != .started }
    }

    /// A medium's new state.
    public struct MediaChange: Sendable, Equatable {
        /// The change's place in the interaction's event log.
        public let seq: Int64
        /// Which medium changed.
        public let kind: MediaKind
        /// The medium's new state.
        public let state: MediaState
        /// The user id of the sender who reported the change.
        public let senderID: String
        /// The sender's role: `customer` or `agent`.
        public let senderRole: String
        /// When the change was stored.
        public let createdAt: Date
    }

    /// Events an erasure redacted.
    public struct Redaction: Sendable, Equatable {
        /// The redacted events' ids (their `seq`).
        public let eventIDs: [Int64]
    }

    /// A typing indicator; treat it as stale after `expiresIn`, as no "stopped" may follow.
    public struct TypingIndicator: Sendable, Equatable {
        /// Whether the sender is typing now; false when they stopped.
        public let isTyping: Bool
        /// The user id of the sender.
        public let senderID: String
        /// The sender's role: `customer` or `agent`.
        public let senderRole: String
        /// How long after its arrival the indicator stays current (the server sends 5 seconds).
        public let expiresIn: Duration
    }

    /// A reader's new position: every event up to `readThrough` has been read by them.
    public struct ReadReceipt: Sendable, Equatable {
        /// The receipt's place in the interaction's event log.
        public let seq: Int64
        /// The user id of the reader.
        public let readerID: String
        /// The reader's role: `customer` or `agent`.
        public let readerRole: String
        /// The reader's position (an event id; messages with a `seq` at or below it were read).
        public let readThrough: Int64
        /// When the position moved.
        public let createdAt: Date
    }

    /// A change of the agent handling the interaction.
    public struct AssignmentChange: Sendable, Equatable {
        /// The change's place in the interaction's event log.
        public let seq: Int64
        /// The agent handling it from now on; nil when it was unassigned.
        public let assignedAgentID: String?
        /// The agent who handled it before; nil when nobody did.
        public let previousAgentID: String?
        /// Who made the change: an agent's user id, `api` for the tenant's backend, or nil when the service assigned
        /// it automatically (round robin).
        public let by: String?
        /// When the change was stored.
        public let createdAt: Date
    }

    /// The log position of a stored event; `nil` for typing and refusals.
    public var seq: Int64? {
        switch self {
        case .state(let change): change.seq
        case .message(let message): message.seq
        case .media(let change): change.seq
        case .read(let receipt): receipt.seq
        case .assignment(let change): change.seq
        case .typing, .redacted, .refused: nil
        }
    }
}
