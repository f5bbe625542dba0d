import Foundation

/// A problem reported by the server (RFC 9457 problem details).
public struct APIProblem: Decodable, Sendable, Equatable {
    public let type: String
    public let title: String
    public let status: Int
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
    public let id: String
    public let title: String
    public let body: String
    public let url: String?
    public let imageURL: String?
    public let publishedAt: Date
    public let updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, title, body, url, imageURL = "image_url", publishedAt = "published_at", updatedAt = "updated_at"
    }
}

/// One page of a list; `nextCursor` continues after it while `hasMore`.
public struct Page<Item: Decodable & Sendable & Equatable>: Decodable, Sendable, Equatable {
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

    public let id: String
    public let customerID: String
    public let subject: String?
    public let state: State
    public let failureReason: String?
    public let createdAt: Date
    public let endedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, subject, state
        case customerID = "customer_id", failureReason = "failure_reason", createdAt = "created_at", endedAt = "ended_at"
    }
}

/// A message of an interaction.
public struct Message: Decodable, Sendable, Equatable {
    /// The message's place in the interaction's event log: the same `seq` its live event carries, so history
    /// (``SwitchboardClient/allMessages(in:pageSize:)``) and live events (``SwitchboardClient/events(for:)``)
    /// can be merged without duplicates.
    public let seq: Int64
    public let id: String
    public let senderID: String
    public let senderRole: String
    public let text: String
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case seq, id, text, senderID = "sender_id", senderRole = "sender_role", createdAt = "created_at"
    }
}

/// A user's session, as the server knows it.
public struct Session: Decodable, Sendable, Equatable {
    /// Who a session acts as.
    public enum Role: String, Decodable, Sendable { case customer, agent }

    public let userID: String
    public let role: Role
    public let tenantID: String
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
