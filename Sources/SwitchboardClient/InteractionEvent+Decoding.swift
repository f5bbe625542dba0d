import Foundation

extension InteractionEvent {
    /// The event an SSE event of the interaction stream carries; `nil` for kinds this client does not know
    /// (including `reconnect`, which only announces the end of the connection) and for malformed ones.
    init?(_ event: ReceivedServerSentEvent) {
        let data = Data(event.data.utf8)
        let decoder = APIDecoding.decoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let seq = event.id.flatMap { Int64($0) }
        switch event.event {
        case "state":
            guard let seq, let body = try? decoder.decode(StateBody.self, from: data) else { return nil }
            self = .state(StateChange(seq: seq, state: body.state, failureReason: body.failureReason,
                                      subject: body.subject, isSnapshot: body.snapshot ?? false,
                                      createdAt: body.createdAt))
        case "message":
            // Its own keys (an attachment's are spelled out): read without the snake-case conversion.
            guard let seq, let body = try? APIDecoding.decoder().decode(MessageBody.self, from: data) else { return nil }
            self = .message(Message(seq: seq, id: body.id, senderID: body.senderID, senderRole: body.senderRole,
                                    text: body.text ?? "", createdAt: body.createdAt,
                                    attachments: body.attachments ?? [], isRedacted: body.redacted ?? false))
        case "media":
            guard let seq, let body = try? decoder.decode(MediaBody.self, from: data),
                  let kind = MediaKind(rawValue: body.kind), let state = MediaState(rawValue: body.state) else { return nil }
            self = .media(MediaChange(seq: seq, kind: kind, state: state, senderID: body.senderId,
                                      senderRole: body.senderRole, createdAt: body.createdAt))
        case "read":
            guard let seq, let body = try? decoder.decode(ReadBody.self, from: data) else { return nil }
            self = .read(ReadReceipt(seq: seq, readerID: body.readerId, readerRole: body.readerRole,
                                     readThrough: body.readThrough, createdAt: body.createdAt))
        case "assignment":
            guard let seq, let body = try? decoder.decode(AssignmentBody.self, from: data) else { return nil }
            self = .assignment(AssignmentChange(seq: seq, assignedAgentID: body.assignedAgentId,
                                                previousAgentID: body.previousAgentId, by: body.by,
                                                createdAt: body.createdAt))
        case "redacted":
            guard let body = try? decoder.decode(RedactedBody.self, from: data) else { return nil }
            self = .redacted(Redaction(eventIDs: body.eventIds))
        case "typing":
            guard let body = try? decoder.decode(TypingBody.self, from: data) else { return nil }
            self = .typing(TypingIndicator(isTyping: body.typing, senderID: body.senderId, senderRole: body.senderRole,
                                           expiresIn: .seconds(body.expiresIn ?? 5)))
        default:
            return nil
        }
    }

    // The `data` of each kind, as the API document gives it (keys in snake case on the wire).
    private struct StateBody: Decodable {
        let state: Interaction.State
        let failureReason: String?
        let subject: String?
        let snapshot: Bool?
        let createdAt: Date?
    }

    /// A message's data: `text` may be absent or empty when it carries attachments, and `attachments` is absent
    /// when it has none (and from a server that predates them).
    private struct MessageBody: Decodable {
        let id: String
        let senderID: String
        let senderRole: String
        let text: String?
        let createdAt: Date
        let attachments: [Attachment]?
        let redacted: Bool?

        enum CodingKeys: String, CodingKey {
            case id, text, attachments, redacted, senderID = "sender_id", senderRole = "sender_role", createdAt = "created_at"
        }
    }

    private struct MediaBody: Decodable {
        let kind: String
        let state: String
        let senderId: String
        let senderRole: String
        let createdAt: Date
    }

    private struct ReadBody: Decodable {
        let readerId: String
        let readerRole: String
        let readThrough: Int64
        let createdAt: Date
    }

    private struct AssignmentBody: Decodable {
        let assignedAgentId: String?
        let previousAgentId: String?
        let by: String?
        let createdAt: Date
    }

    private struct RedactedBody: Decodable {
        let eventIds: [Int64]
    }

    private struct TypingBody: Decodable {
        let typing: Bool
        let senderId: String
        let senderRole: String
        let expiresIn: Int?
    }
}
