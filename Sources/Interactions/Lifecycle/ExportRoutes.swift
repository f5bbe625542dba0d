import Accounts
import Foundation
import HTTPServer
import Postgres

/// A user's data (GDPR Art. 15 and 20): `GET /v1/users/{user_id}/export` (the tenant's backend) answers one JSON
/// document of the interactions the user opened, each with its messages (attachments' metadata and a signed download
/// link valid for an hour) and, with `?include_notes=1`, agents' notes about it. Written as it is read — interactions
/// a page at a time, messages a thousand at a time, each page its own short query — so an export of any size takes
/// the same memory. Audited (`user.exported`).
public struct ExportRoutes: Sendable {
    let pool: PostgresPool
    let guardian: AccessGuard
    let links: DownloadLinks
    let store = InteractionStore()

    /// The route over `pool`, for API keys.
    public init(pool: PostgresPool, guardian: AccessGuard) {
        self.pool = pool
        self.guardian = guardian
        self.links = DownloadLinks(pool: pool)
    }

    /// Adds the route to `router`.
    public func register(on router: inout Router) {
        router.get("/v1/users/{user_id}/export", guardian.require(.apiKey, export))
    }

    @Sendable func export(_ request: Request, _ principal: Principal) async throws -> Response {
        let user = try LegalHoldRoutes.user(request)
        let includeNotes: Bool
        switch request.queryValue("include_notes") {
        case nil, "0": includeNotes = false
        case "1": includeNotes = true
        default: throw Problem.badRequest("include_notes must be 0 or 1.", parameter: "include_notes")
        }
        let key = try await links.key()
        try await pool.withTransaction { connection in
            try await AuditLog.record("user.exported", .user(user), tenant: principal.tenantID,
                                      by: AuditContext(principal, request), on: connection)
        }
        let tenant = principal.tenantID
        let exportedAt = Date()
        let opening = Array(#"{"user_id":"#.utf8) + (try JSON.encode(user)) + Array(#","exported_at":"#.utf8)
            + (try JSON.encode(exportedAt)) + Array(#","include_notes":\#(includeNotes),"interactions":["#.utf8)
        let body = StreamedBody(opening: opening) { [pool, store] writer in
            var after: (micros: Int64, id: UUID)?
            var first = true
            while true {
                let page = try await pool.withConnection { connection in
                    try await connection.query("""
                        SELECT id, subject, state, created_at, ended_at,
                               (extract(epoch FROM created_at) * 1000000)::bigint AS created_micros
                        FROM interactions WHERE tenant_id = $1::uuid AND customer_id = $2
                          AND ($3::bigint IS NULL OR ((extract(epoch FROM created_at) * 1000000)::bigint, id) > ($3, $4::uuid))
                        ORDER BY created_at, id LIMIT 100
                        """, [tenant, user, after?.micros, after?.id])
                }
                for row in page {
                    let id: UUID = try row.decode("id")
                    let head = ExportedInteraction(id: id.lowercased, subject: try row.decode("subject"),
                                                   state: try row.decode("state"), createdAt: try row.decode("created_at"),
                                                   endedAt: try row.decode("ended_at"))
                    var bytes = Array((first ? "" : ",").utf8) + (try JSON.encode(head))
                    first = false
                    bytes.removeLast()  // the closing brace: the messages follow inside the same object
                    try await writer.write(bytes + Array(#","messages":["#.utf8))
                    try await ExportRoutes.writeMessages(of: id, pool: pool, store: store, key: key, writer: writer)
                    if includeNotes {
                        try await writer.write(Array(#"],"notes":["#.utf8))
                        try await ExportRoutes.writeNotes(of: id, pool: pool, writer: writer)
                    }
                    try await writer.write(Array("]}".utf8))
                    after = (try row.decode("created_micros"), id)
                }
                if page.count < 100 { break }
            }
            try await writer.write(Array("]}".utf8))
        }
        return Response(status: 200, headers: [
            "Content-Type": "application/json",
            "Content-Disposition": ContentDisposition.header(name: "export-\(user).json", inline: false),
            "Cache-Control": "no-store",
        ], stream: body)
    }

    /// The interaction's messages, a thousand at a time, each attachment with a signed download link.
    static func writeMessages(of id: UUID, pool: PostgresPool, store: InteractionStore, key: [UInt8],
                              writer: any BodyWriter) async throws {
        var after: Int64?
        var first = true
        let expires = Int(Date().timeIntervalSince1970 + DownloadLinks.lifetime)
        while true {
            let messages = try await pool.withConnection { connection in
                try await store.messages(of: id, after: after, limit: 1000, on: connection)
            }
            var bytes: [UInt8] = []
            for message in messages {
                let exported = ExportedMessage(message: message, links: (message.attachments ?? []).map {
                    DownloadLinks.path(of: $0.id, expires: expires, key: key)
                })
                bytes += Array((first ? "" : ",").utf8) + (try JSON.encode(exported))
                first = false
            }
            if !bytes.isEmpty { try await writer.write(bytes) }
            guard messages.count == 1000, let last = messages.last else { return }
            after = last.seq
        }
    }

    /// Agents' notes about the interaction, a thousand at a time.
    static func writeNotes(of id: UUID, pool: PostgresPool, writer: any BodyWriter) async throws {
        var after: Int64 = 0
        var first = true
        while true {
            let rows = try await pool.withConnection { connection in
                try await connection.query("""
                    SELECT note_seq, id, author_id, text, created_at FROM interaction_notes
                    WHERE interaction_id = $1::uuid AND note_seq > $2 ORDER BY note_seq LIMIT 1000
                    """, [id, after])
            }
            var bytes: [UInt8] = []
            for row in rows {
                let note = ExportedNote(id: try row.decode("id", as: UUID.self).lowercased, authorID: try row.decode("author_id"),
                                        text: try row.decode("text"), createdAt: try row.decode("created_at"))
                bytes += Array((first ? "" : ",").utf8) + (try JSON.encode(note))
                first = false
                after = try row.decode("note_seq")
            }
            if !bytes.isEmpty { try await writer.write(bytes) }
            if rows.count < 1000 { return }
        }
    }
}

/// An interaction's own fields in an export (its messages and notes follow in the same object).
struct ExportedInteraction: Encodable {
    let id: String
    let subject: String?
    let state: String
    let createdAt: Date
    let endedAt: Date?

    enum CodingKeys: String, CodingKey { case id, subject, state, createdAt = "created_at", endedAt = "ended_at" }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(subject, forKey: .subject)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(endedAt, forKey: .endedAt)
    }
}

/// A message in an export: as the API lists it, each attachment with a signed `download_url`.
struct ExportedMessage: Encodable {
    let message: InteractionMessage
    let links: [String]

    struct ExportedAttachment: Encodable {
        let attachment: Attachment
        let downloadURL: String

        func encode(to encoder: any Encoder) throws {
            try attachment.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(downloadURL, forKey: .downloadURL)
        }

        enum Key: String, CodingKey { case downloadURL = "download_url" }
    }

    enum CodingKeys: String, CodingKey {
        case seq, id, text, attachments, senderID = "sender_id", senderRole = "sender_role", createdAt = "created_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(message.seq, forKey: .seq)
        try container.encode(message.id, forKey: .id)
        try container.encode(message.senderID, forKey: .senderID)
        try container.encode(message.senderRole, forKey: .senderRole)
        try container.encode(message.text, forKey: .text)
        try container.encode(message.createdAt, forKey: .createdAt)
        let attachments = zip(message.attachments ?? [], links).map { ExportedAttachment(attachment: $0, downloadURL: $1) }
        try container.encode(attachments, forKey: .attachments)
    }
}

/// An agent's note in an export.
struct ExportedNote: Encodable {
    let id: String
    let authorID: String
    let text: String
    let createdAt: Date

    enum CodingKeys: String, CodingKey { case id, text, authorID = "author_id", createdAt = "created_at" }
}
