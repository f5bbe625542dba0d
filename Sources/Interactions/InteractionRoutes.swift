import Accounts
import Foundation
import HTTPServer
import Postgres

/// The interactions API: customers open support interactions; customers and agents exchange messages, typing
/// and media state, and mark what they have read; agents claim or are assigned interactions and may fail them.
/// Customers see only their own interactions (others are 404).
///
/// A class, not a struct: each route's handler is a method reference, and a reference to a struct's method carries a
/// copy of the whole struct into every call's frame (every message POST's task held one, most of a kilobyte).
public final class InteractionRoutes: Sendable {
    let pool: PostgresPool
    let store = InteractionStore()
    let writes: IdempotentWrites
    let guardian: AccessGuard
    let streams: InteractionStreamRoute
    /// How many agents are online, for customers' view of an interaction.
    let presence: PresenceKeeper?
    /// Agents' reads of interactions, for the audit trail.
    let views: ViewAudit

    /// Routes over `pool`, guarded by `guardian`; event streams come from `events`, agents' presence from `presence`.
    public init(pool: PostgresPool, guardian: AccessGuard, events: InteractionEvents, presence: PresenceKeeper? = nil) {
        self.pool = pool
        self.writes = IdempotentWrites(pool: pool)
        self.guardian = guardian
        self.streams = InteractionStreamRoute(pool: pool, events: events)
        self.presence = presence
        self.views = ViewAudit(pool: pool)
    }

    /// The event-stream route's template: long-lived connections, which a server may hold in a daemon of their own.
    public static let eventStreamTemplate = "/v1/interactions/{id}/events"

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.post("/v1/interactions", guardian.require(.customer, create))
        router.get("/v1/interactions", guardian.require(.session, list))
        router.get("/v1/interactions/{id}", guardian.require(.session, show))
        router.post("/v1/interactions/{id}/messages", guardian.require(.session, postMessage))
        router.get("/v1/interactions/{id}/messages", guardian.require(.session, listMessages))
        router.post("/v1/interactions/{id}/typing", guardian.require(.session, typing))
        router.post("/v1/interactions/{id}/media", guardian.require(.session, media))
        router.post("/v1/interactions/{id}/end", guardian.require(.session, end))
        router.post("/v1/interactions/{id}/fail", guardian.require(.agent, fail))
        router.post("/v1/interactions/{id}/read", guardian.require(.session, read))
        router.post("/v1/interactions/{id}/claim", guardian.require(.agent, claim))
        router.post("/v1/interactions/{id}/assign", guardian.require([.agent, .apiKey], assign))
        router.post("/v1/interactions/{id}/notes", guardian.require(.agent, postNote))
        router.get("/v1/interactions/{id}/notes", guardian.require(.agent, listNotes))
        router.get(Self.eventStreamTemplate, guardian.require(.session, streams.stream, fromMemory: streams.streamFromMemory))
    }

    struct CreateBody: RequestBody {
        let subject: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case subject }

        /// `{}` or a string subject, read from the strict check's outline.
        static func decoded(from outline: StrictJSON.Outline) -> CreateBody? {
            guard outline.isObject else { return nil }
            if outline.keys.isEmpty { return CreateBody(subject: nil) }
            return outline.strings["subject"].map { CreateBody(subject: $0) }
        }
    }

    @Sendable func create(_ request: Request, _ principal: Principal) async throws -> Response {
        let body = request.body.isEmpty ? CreateBody(subject: nil) : try request.decodeJSON(CreateBody.self)
        if let subject = body.subject { try Problem.requireLength(subject, of: "subject", in: 1 ... 200) }
        return try await writes.runStatement(request, principal) { [store] connection in
            .json(try await store.create(subject: body.subject, for: principal, on: connection), status: 201)
        }
    }

    @Sendable func list(_ request: Request, _ principal: Principal) async throws -> Response {
        let limit = try request.integerQuery("limit", default: 20, in: 1 ... 100)
        var state: InteractionState?
        if let text = request.queryValue("state") {
            guard let parsed = InteractionState(rawValue: text) else {
                throw Problem.badRequest("state must be started, ended or failed.", parameter: "state")
            }
            state = parsed
        }
        let assigned = try InteractionRoutes.assignmentFilter(request, principal)
        let cursor = try request.parsedQuery("cursor") { KeysetCursor(encoded: $0) }
        let rows = try await pool.withConnection { [store] connection in
            try await store.list(for: principal, state: state, assigned: assigned, limit: limit + 1, after: cursor,
                                 on: connection)
        }
        return .json(PageBody(overfetched: rows, limit: limit, item: \.0, cursor: \.1.encoded))
    }

    @Sendable func show(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        guard var interaction = try await pool.withConnection({ [store] connection in
            try await store.find(id, for: principal, on: connection)
        }) else { throw InteractionError.notFound(id) }
        try await views.viewed(id, by: principal, request)
        // Customers learn whether anyone is there to answer — a count, never who.
        if principal.role == .customer, let presence { interaction.agentsOnline = try await presence.onlineCount(of: principal.tenantID) }
        return .json(interaction)
    }

    struct MessageBody: RequestBody {
        let text: String?
        let attachmentIDs: [String]?
        enum CodingKeys: String, CodingKey, CaseIterable { case text, attachmentIDs = "attachment_ids" }

        /// A text message (`{"text": "…"}`, nearly every one), read from the strict check's outline; files and
        /// anything unusual go through the decoder.
        static func decoded(from outline: StrictJSON.Outline) -> MessageBody? {
            guard outline.isObject, outline.keys == ["text"], let text = outline.strings["text"] else { return nil }
            return MessageBody(text: text, attachmentIDs: nil)
        }
    }

    /// The most files one message carries.
    static let attachmentsPerMessage = 10

    @Sendable func postMessage(_ request: Request, _ principal: Principal) async throws -> Response {
        let message = try PostedMessage(request)
        // Text only — nearly every message — is one statement, its own transaction, with its key's record if any.
        if message.attachmentIDs.isEmpty {
            return try await postMessageAlone(message.text, to: message.interaction, request, principal)
        }
        return try await postMessageWithAttachments(message, request, principal)
    }

    /// A message POST's interaction and body, checked. Read out of line: every message's task holds the handler's
    /// frame while it waits for the database, and the checks' values and errors would make it larger.
    struct PostedMessage {
        let interaction: UUID
        let text: String
        let attachmentIDs: [UUID]

        @inline(never)
        init(_ request: Request) throws {
            interaction = try InteractionRequest.id(request)
            let body = try request.decodeJSON(MessageBody.self)
            attachmentIDs = try InteractionRoutes.attachmentIDs(body.attachmentIDs)
            text = body.text ?? ""
            try Problem.requireLength(text, of: "text", in: (attachmentIDs.isEmpty ? 1 : 0) ... 4000)
        }
    }

    /// A message with files: the interaction locked, the files claimed and the message stored in one transaction.
    @inline(never)
    private func postMessageWithAttachments(_ message: PostedMessage, _ request: Request, _ principal: Principal) async throws
        -> Response {
        let (id, attachmentIDs) = (message.interaction, message.attachmentIDs)
        return try await writes.run(request, principal) { [store] connection in
            try await store.lock(id, for: principal, allowing: .message, on: connection)
            let attachments = AttachmentStore()
            let claimed = try await attachments.claim(attachmentIDs, for: id, by: principal, on: connection)
            let stored = try await store.addMessage(message.text, attachments: claimed, from: principal, to: id, on: connection)
            try await attachments.markUsed(attachmentIDs, by: stored.seq, on: connection)
            return .json(stored, status: 201)
        }
    }

    /// A text message, stored in one statement: a key already taken, or a message refused under a key, is answered
    /// by what the key recorded (so a retry of a stored message gets its answer, even once the interaction ended).
    private func postMessageAlone(_ text: String, to id: UUID, _ request: Request, _ principal: Principal) async throws -> Response {
        let key = try IdempotentWrites.key(of: request, principal)
        let outcome: InteractionStore.AloneOutcome
        do {
            outcome = try await pool.withConnection { [store] connection in
                try await store.addMessageAlone(text, from: principal, to: id, recordingUnder: key, on: connection)
            }
        } catch {
            return try await answerRecorded(under: key, after: error)
        }
        switch outcome {
        case .stored(let answer): return .json(encoded: answer, status: 201)
        case .keyTaken: return try await answerRecorded(under: key, after: nil)
        }
    }

    /// What `key` recorded, for a message not stored now: its key was taken (`error` nil), or the message was refused
    /// (an ``InteractionError``), which a retry of a message stored before still answers with its record. Other
    /// errors, and a refusal with no record, are thrown.
    @inline(never)
    private func answerRecorded(under key: IdempotentWrites.Key?, after error: (any Error)?) async throws -> Response {
        if let error, !(error is InteractionError) { throw error }
        guard let key, let answer = try await writes.recordedAnswer(under: key) else {
            throw error ?? IdempotencyError.vanished(key: key?.key ?? "")
        }
        return answer
    }

    /// A message's `attachment_ids`: distinct UUIDs, at most ``attachmentsPerMessage``.
    static func attachmentIDs(_ values: [String]?) throws -> [UUID] {
        guard let values else { return [] }
        guard values.count <= attachmentsPerMessage else {
            throw Problem.badRequest("A message carries at most \(attachmentsPerMessage) attachments.", parameter: "attachment_ids")
        }
        var ids: [UUID] = []
        for value in values {
            guard let id = UUID(uuidString: value), value.count == 36 else {
                throw Problem.badRequest("attachment_ids holds '\(value.prefix(64))', which is not an attachment id.",
                                         parameter: "attachment_ids")
            }
            guard !ids.contains(id) else {
                throw Problem.badRequest("attachment_ids names \(value) twice.", parameter: "attachment_ids")
            }
            ids.append(id)
        }
        return ids
    }

    @Sendable func listMessages(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let limit = try request.integerQuery("limit", default: 20, in: 1 ... 100)
        let after = try request.parsedQuery("cursor") { text in Int64(text).flatMap { $0 >= 0 ? $0 : nil } }
        let messages = try await pool.withConnection { [store] connection -> [InteractionMessage] in
            guard let position = try await store.logPosition(of: id, for: principal, on: connection) else {
                throw InteractionError.notFound(id)
            }
            // A cursor past the log (kept from before ids were renumbered per interaction, or forged) would page
            // silently into nothing: refuse it, so the client reloads from the start.
            if let after, after > position.lastSeq {
                throw InteractionError.cursorBeyondLog(id, cursor: after, lastSeq: position.lastSeq)
            }
            return try await store.messages(of: id, after: after, limit: limit + 1, on: connection)
        }
        try await views.viewed(id, by: principal, request)
        return .json(PageBody(overfetched: messages, limit: limit, item: { $0 }, cursor: { String($0.seq) }))
    }

    struct TypingBody: RequestBody {
        let typing: Bool
        enum CodingKeys: String, CodingKey, CaseIterable { case typing }
    }

    /// The answer to a typing change: `{"typing":true}` or `{"typing":false}`.
    static func typingAnswer(_ typing: Bool) -> [UInt8] {
        Array((typing ? #"{"typing":true}"# : #"{"typing":false}"#).utf8)
    }

    @Sendable func typing(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let body = try request.decodeJSON(TypingBody.self)
        try await pool.withConnection { [store] connection in
            try await store.announceTypingAlone(body.typing, by: principal, in: id, on: connection)
        }
        return .json(encoded: InteractionRoutes.typingAnswer(body.typing), status: 202)
    }

    struct MediaBody: RequestBody {
        let kind: String
        let state: String
        enum CodingKeys: String, CodingKey, CaseIterable { case kind, state }
    }
    struct MediaChange: Encodable { let seq: Int64; let kind: MediaKind; let state: MediaState }

    @Sendable func media(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let body = try request.decodeJSON(MediaBody.self)
        guard let kind = MediaKind(rawValue: body.kind) else {
            throw Problem.badRequest("kind must be audio, video or screen.", parameter: "kind")
        }
        guard let state = MediaState(rawValue: body.state) else {
            throw Problem.badRequest("state must be requested, active or ended.", parameter: "state")
        }
        return try await writes.run(request, principal) { [store] connection in
            try await store.lock(id, for: principal, allowing: .media, on: connection)
            let seq = try await store.setMedia(kind, state, from: principal, on: id, on: connection)
            return try .json(MediaChange(seq: seq, kind: kind, state: state), status: 201)
        }
    }

    @Sendable func end(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        return try await writes.run(request, principal) { [store] connection in
            try await store.lock(id, for: principal, allowing: .end, on: connection)
            return .json(try await store.close(id, as: .ended, reason: nil, by: principal, on: connection))
        }
    }

    struct FailBody: RequestBody {
        let reason: String
        enum CodingKeys: String, CodingKey, CaseIterable { case reason }
    }

    @Sendable func fail(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let body = try request.decodeJSON(FailBody.self)
        try Problem.requireLength(body.reason, of: "reason", in: 1 ... 500)
        return try await writes.run(request, principal) { [store] connection in
            try await store.lock(id, for: principal, allowing: .fail, on: connection)
            return .json(try await store.close(id, as: .failed, reason: body.reason, by: principal, on: connection))
        }
    }
}
