import Foundation

/// A problem reported by the server (RFC 9457 problem details).
public struct APIProblem: Decodable, Sendable, Equatable {
    /// A URI reference naming the problem type, e.g. `/problems/not-found`; `about:blank` when the error response
    /// carried no problem details.
    public let type: String
    /// A short summary of the problem type, the same for every occurrence.
    public let title: String
    /// The HTTP status code.
    public let status: Int
    /// What went wrong this time, for a person to read; nil when the server gave no detail.
    public let detail: String?
}

/// Why a call failed: the server said no (with its problem details), the network failed, or the answer was not
/// what the API document promises.
public enum SwitchboardError: Error, Sendable {
    /// The server answered with an error status and problem details.
    case problem(APIProblem)
    /// The request did not get an answer (after retries).
    case transport(String)
    /// The answer could not be read.
    case invalidResponse(String)
}

/// One item of a feed.
public struct FeedItem: Decodable, Sendable, Equatable {
    /// The item's id (a lower-case UUID).
    public let id: String
    /// The headline.
    public let title: String
    /// The item's text; empty when it has none.
    public let body: String
    /// The link the item points to (an absolute http(s) URL); nil when it has none.
    public let url: String?
    /// An image to show with the item (an absolute http(s) URL); nil when it has none.
    public let imageURL: String?
    /// The publication time, which orders the feed (newest first).
    public let publishedAt: Date
    /// When the item was created or last changed.
    public let updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, title, body, url, imageURL = "image_url", publishedAt = "published_at", updatedAt = "updated_at"
    }
}

/// One page of a list; `nextCursor` continues after it while `hasMore`.
public struct Page<Item: Decodable & Sendable & Equatable>: Decodable, Sendable, Equatable {
    /// The page's items, in the list's order: newest first for feeds and interactions, oldest first for messages.
    public let items: [Item]
    /// Pass it as `cursor` to get the next page; opaque.
    public let nextCursor: String?
    /// Whether a next page exists.
    public let hasMore: Bool

    enum CodingKeys: String, CodingKey { case items, nextCursor = "next_cursor", hasMore = "has_more" }
}

/// A support interaction.
public struct Interaction: Decodable, Sendable, Equatable {
    /// Where an interaction is in its life.
    public enum State: String, Decodable, Sendable { case started, ended, failed }

    /// The interaction's id (a lower-case UUID).
    public let id: String
    /// The user id of the customer who opened it.
    public let customerID: String
    /// What it is about, as the customer gave it; nil when they gave none.
    public let subject: String?
    /// Where it is in its life: `started`, then `ended` or `failed`.
    public let state: State
    /// Why it failed, as the agent gave it; nil unless `state` is `failed`.
    public let failureReason: String?
    /// When it was opened.
    public let createdAt: Date
    /// When it ended or failed; nil while it is `started`.
    public let endedAt: Date?
    /// The user id of the agent handling it; nil while nobody is assigned.
    public let assignedAgentID: String?
    /// Messages from the other side after the user's read position (for a customer, agents' messages; for an agent,
    /// the customer's): the badge to show. It is the user's own count, so fetch it with the user's token.
    public let unreadCount: Int64
    /// How far the other side has read (an event id; 0 when it has read nothing): messages with a `seq` at or below
    /// it have been seen. For a customer, the furthest any agent has read; for an agent, the customer's position.
    public let readByOtherThrough: Int64
    /// For a customer: how many agents are online now ("We're online" or "Leave a message"); nil for agents.
    public let agentsOnline: Int64?

    enum CodingKeys: String, CodingKey {
        case id, subject, state
        case customerID = "customer_id", failureReason = "failure_reason", createdAt = "created_at", endedAt = "ended_at"
        case assignedAgentID = "assigned_agent_id", unreadCount = "unread_count", readByOtherThrough = "read_by_other_through"
        case agentsOnline = "agents_online"
    }

    /// Decodes an interaction; the read and assignment fields default to none (a server from before them omits them).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        customerID = try container.decode(String.self, forKey: .customerID)
        subject = try container.decodeIfPresent(String.self, forKey: .subject)
        state = try container.decode(State.self, forKey: .state)
        failureReason = try container.decodeIfPresent(String.self, forKey: .failureReason)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        endedAt = try container.decodeIfPresent(Date.self, forKey: .endedAt)
        assignedAgentID = try container.decodeIfPresent(String.self, forKey: .assignedAgentID)
        unreadCount = try container.decodeIfPresent(Int64.self, forKey: .unreadCount) ?? 0
        readByOtherThrough = try container.decodeIfPresent(Int64.self, forKey: .readByOtherThrough) ?? 0
        agentsOnline = try container.decodeIfPresent(Int64.self, forKey: .agentsOnline)
    }
}

/// Where the user stands in an interaction after ``SwitchboardClient/markRead(_:through:)``.
public struct ReadPosition: Decodable, Sendable, Equatable {
    /// The user's read position: the highest event id they have marked read. It never moves backwards, so it may
    /// be above the id just sent (another device of the user read further).
    public let readThrough: Int64
    /// Messages from the other side after `readThrough`.
    public let unreadCount: Int64

    enum CodingKeys: String, CodingKey { case readThrough = "read_through", unreadCount = "unread_count" }
}

/// Which interactions a list shows by assignment (``SwitchboardClient/interactions(state:assigned:limit:cursor:)``).
public enum AssignmentFilter: String, Sendable {
    /// All of them, assigned or not.
    case any
    /// Those nobody is assigned to: the queue.
    case unassigned = "none"
    /// Those assigned to the calling agent (agents only: a customer gets a 400).
    case me
}

/// A message of an interaction.
public struct Message: Decodable, Sendable, Equatable {
    /// The message's place in the interaction's event log: the same `seq` its live event carries, so history
    /// (``SwitchboardClient/allMessages(in:pageSize:)``) and live events (``SwitchboardClient/events(for:)``)
    /// can be merged without duplicates.
    public let seq: Int64
    /// The message's id (a lower-case UUID).
    public let id: String
    /// The user id of the sender.
    public let senderID: String
    /// The sender's role: `customer` or `agent`.
    public let senderRole: String
    /// The text, as sent; empty for a message that carries only attachments (the server then sends `""` or no
    /// text at all, and both read as `""`).
    public let text: String
    /// When it was stored.
    public let createdAt: Date
    /// The files sent with it (their metadata; fetch the bytes with ``SwitchboardClient/download(_:to:)``), in the
    /// order the sender gave them; empty when it has none (and from a server that predates attachments).
    public let attachments: [Attachment]
    /// Whether the sender's data was erased: the text is then `""` and the files are gone. An app shows a
    /// placeholder ("message removed"), never what it had on screen before.
    public var isRedacted = false

    enum CodingKeys: String, CodingKey {
        case seq, id, text, attachments, redacted, senderID = "sender_id", senderRole = "sender_role", createdAt = "created_at"
    }
}

extension Message {
    /// Decodes a message; an absent `text` reads as `""` and absent `attachments` as none. (In an extension, so the
    /// memberwise initializer the event decoding uses remains.)
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(Int64.self, forKey: .seq)
        id = try container.decode(String.self, forKey: .id)
        senderID = try container.decode(String.self, forKey: .senderID)
        senderRole = try container.decode(String.self, forKey: .senderRole)
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        attachments = try container.decodeIfPresent([Attachment].self, forKey: .attachments) ?? []
        isRedacted = try container.decodeIfPresent(Bool.self, forKey: .redacted) ?? false
    }
}

/// A user's session, as the server knows it.
public struct Session: Decodable, Sendable, Equatable {
    /// Who a session acts as.
    public enum Role: String, Decodable, Sendable { case customer, agent }

    /// The user the session acts for, as the tenant's backend named them.
    public let userID: String
    /// Whether the user acts as a customer or as an agent.
    public let role: Role
    /// The tenant (host app) the session belongs to (a lower-case UUID).
    public let tenantID: String
    /// When the session stops being accepted; the tenant's backend must then open a new one.
    public let expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case role, userID = "user_id", tenantID = "tenant_id", expiresAt = "expires_at"
    }
}

/// Media a conversation can use, and their states.
public enum MediaKind: String, Sendable { case audio, video, screen }
/// The state of one medium.
public enum MediaState: String, Sendable { case requested, active, ended }

enum APIDecoding {
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: text) { return date }
            formatter.formatOptions = [.withInternetDateTime]
            if let date = formatter.date(from: text) { return date }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
        }
        return decoder
    }
}
