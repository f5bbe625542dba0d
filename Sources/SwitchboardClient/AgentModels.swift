import Foundation

/// One event of an agent's inbox stream (``SwitchboardClient/inbox(assigned:states:)``).
public enum InboxEvent: Sendable, Equatable {
    /// An interaction changed (or, before ``snapshotEnd(count:)``, is in view now): show it as it is, or remove it
    /// when `inView` is false.
    case interaction(InboxEntry)
    /// The snapshot is complete; live changes follow.
    case snapshotEnd(count: Int)
    /// An agent wrote a note on an interaction in view (each note arrives once).
    case note(InboxNote)
    /// An agent's status changed (not replayed after a reconnect: ask ``SwitchboardClient/agents()``).
    case agentStatus(agentID: String, status: AgentStatus)
    /// The stream starts over from a snapshot (the server could not resume from where it was): forget every
    /// interaction shown, the snapshot that follows brings them back.
    case reset
    /// The server refused the stream for good (a customer's session, say); nothing follows.
    case refused(APIProblem)
}

/// An interaction as an agent's inbox shows it.
public struct InboxEntry: Decodable, Sendable, Equatable {
    /// The interaction, exactly as ``SwitchboardClient/interaction(_:)`` returns it to this agent.
    public let interaction: Interaction
    /// The latest message or note; nil when there is none.
    public let lastMessage: LastMessage?
    /// Whether it is in the stream's view; false: it left the view (claimed by someone else, ended…), remove it.
    public let inView: Bool

    /// The preview of the latest message or note.
    public struct LastMessage: Decodable, Sendable, Equatable {
        /// The message's or note's id.
        public let id: String
        /// `message` or `note`.
        public let kind: String
        /// Its text, cut at 200 characters.
        public let text: String
        /// `customer` or `agent`.
        public let senderRole: String
        /// When it was written.
        public let createdAt: Date

        enum CodingKeys: String, CodingKey { case id, kind, text, senderRole = "sender_role", createdAt = "created_at" }
    }

    enum CodingKeys: String, CodingKey { case lastMessage = "last_message", inView = "in_view" }

    /// Decodes the interaction's fields and the two of the inbox from one object.
    public init(from decoder: any Decoder) throws {
        interaction = try Interaction(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lastMessage = try container.decodeIfPresent(LastMessage.self, forKey: .lastMessage)
        inView = try container.decodeIfPresent(Bool.self, forKey: .inView) ?? true
    }
}

/// An agent's private note on an interaction (never shown to customers).
public struct Note: Decodable, Sendable, Equatable {
    /// The note's id.
    public let id: String
    /// Its number among the interaction's notes (1, 2, 3…).
    public let noteSeq: Int64
    /// The agent who wrote it.
    public let authorID: String
    /// The text.
    public let text: String
    /// The interaction's last event id when it was written.
    public let afterSeq: Int64
    /// When it was stored.
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, text, noteSeq = "note_seq", authorID = "author_id", afterSeq = "after_seq", createdAt = "created_at"
    }
}

/// A note as the inbox delivers it: with its interaction.
public struct InboxNote: Decodable, Sendable, Equatable {
    /// The interaction it is about.
    public let interactionID: String
    /// The note.
    public let note: Note

    enum CodingKeys: String, CodingKey { case interactionID = "interaction_id" }

    /// Decodes the note and its interaction's id from one object.
    public init(from decoder: any Decoder) throws {
        note = try Note(from: decoder)
        interactionID = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .interactionID)
    }
}

/// An agent's status as others see it.
public enum AgentStatus: String, Decodable, Sendable {
    /// Holding an inbox stream, and chose to be online.
    case online
    /// Holding an inbox stream, and chose to be away.
    case away
    /// Without an inbox stream for longer than the grace.
    case offline
}

/// An agent of the tenant (``SwitchboardClient/agents()``).
public struct Agent: Decodable, Sendable, Equatable {
    /// The agent's user id.
    public let agentID: String
    /// Its status now.
    public let status: AgentStatus
    /// Interactions assigned to it that are still started.
    public let openInteractions: Int64
    /// When it was last seen holding an inbox stream.
    public let lastSeenAt: Date?

    enum CodingKeys: String, CodingKey {
        case status, agentID = "agent_id", openInteractions = "open_interactions", lastSeenAt = "last_seen_at"
    }
}

/// The tenant's support settings (``SwitchboardClient/settings()``, the tenant's backend).
public struct SupportSettings: Decodable, Sendable, Equatable {
    /// `off` or `round_robin`.
    public let autoAssign: String
    /// The most open interactions automatic assignment gives one agent.
    public let maxOpenPerAgent: Int
    /// Days ended interactions are kept before retention deletes them; nil keeps them.
    public let retentionDays: Int?

    enum CodingKeys: String, CodingKey {
        case autoAssign = "auto_assign", maxOpenPerAgent = "max_open_per_agent", retentionDays = "retention_days"
    }

    /// Decodes the settings; a server from before retention sends no `retention_days` (kept).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        autoAssign = try container.decode(String.self, forKey: .autoAssign)
        maxOpenPerAgent = try container.decode(Int.self, forKey: .maxOpenPerAgent)
        retentionDays = try container.decodeIfPresent(Int.self, forKey: .retentionDays)
    }
}

struct SupportStatusBody: Decodable {
    let agentsOnline: Int64
    enum CodingKeys: String, CodingKey { case agentsOnline = "agents_online" }
}

struct AgentList: Decodable { let items: [Agent] }
