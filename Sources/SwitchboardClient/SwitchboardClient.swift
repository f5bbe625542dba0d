import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Typed access to the Switchboard API for an app: feeds, interactions and the session.
///
/// `tokenProvider` returns the user's session token (ask your backend for one); it is called for every request,
/// so it may refresh. Every POST is retried safely with an `Idempotency-Key`; feed pages are revalidated with ETags.
public final class SwitchboardClient: Sendable {
    let baseURL: URL
    let tokenProvider: @Sendable () async throws -> String
    let session: URLSession
    let retry: RetryPolicy
    let eventPolicy: EventStreamPolicy
    /// A copy of `session`'s configuration with the event streams' idle timeout (the caller's is left alone).
    let eventConfiguration: URLSessionConfiguration
    /// A copy of `session`'s configuration, for the sessions of downloads into files.
    let transferConfiguration: URLSessionConfiguration
    let pages = ETagCache()
    let liveInteractions = LiveInteractions()

    /// A client of the service at `baseURL`. Event streams and downloads into files (``download(_:to:)``) use a
    /// session of their own per connection, with `session`'s configuration (its delegate, if any, is not used for
    /// them).
    public init(baseURL: URL, tokenProvider: @escaping @Sendable () async throws -> String,
                session: URLSession = .shared, retry: RetryPolicy = RetryPolicy(),
                eventPolicy: EventStreamPolicy = EventStreamPolicy()) {
        self.baseURL = baseURL
        self.tokenProvider = tokenProvider
        self.session = session
        self.retry = retry
        self.eventPolicy = eventPolicy
        // FoundationNetworking returns the session's own object here (Apple platforms return a copy): copy it.
        let configuration = (session.configuration.copy() as? URLSessionConfiguration) ?? .default
        configuration.timeoutIntervalForRequest = InteractionEventConnection.idleTimeout(eventPolicy)
        self.eventConfiguration = configuration
        self.transferConfiguration = (session.configuration.copy() as? URLSessionConfiguration) ?? .default
    }

    /// One page of feed `key`; a reload sends `If-None-Match` and returns the cached page on 304.
    public func feed(_ key: String, limit: Int? = nil, cursor: String? = nil) async throws -> Page<FeedItem> {
        let url = try self.url("/v1/feeds/\(Self.segment(key))", Self.pageQuery(limit: limit, cursor: cursor))
        let cached = await pages.entry(for: url)
        var headers: [String: String] = [:]
        if let cached { headers["If-None-Match"] = cached.etag }
        let (data, response) = try await send("GET", url, body: nil, headers: headers)
        if response.statusCode == 304, let cached { return try decode(Page<FeedItem>.self, cached.body) }
        let page = try decode(Page<FeedItem>.self, data)
        if let etag = response.value(forHTTPHeaderField: "ETag") { await pages.store(url, etag: etag, body: data) }
        return page
    }

    /// Every item of feed `key`, page after page.
    public func allItems(of key: String, pageSize: Int = 50) -> AsyncThrowingStream<FeedItem, any Error> {
        Self.walk { cursor in try await self.feed(key, limit: pageSize, cursor: cursor) }
    }

    /// Opens a support interaction (customers).
    public func startInteraction(subject: String? = nil) async throws -> Interaction {
        try await call("POST", "/v1/interactions", body: subject.map { ["subject": $0] } ?? [:])
    }

    /// One interaction.
    public func interaction(_ id: String) async throws -> Interaction {
        try await call("GET", "/v1/interactions/\(Self.segment(id))")
    }

    /// A page of the caller's interactions (all of the tenant's for agents), optionally in one state and by
    /// assignment (`.me` is for agents).
    public func interactions(state: Interaction.State? = nil, assigned: AssignmentFilter? = nil, limit: Int? = nil,
                             cursor: String? = nil) async throws -> Page<Interaction> {
        var filter = state.map { [URLQueryItem(name: "state", value: $0.rawValue)] } ?? []
        if let assigned { filter.append(URLQueryItem(name: "assigned", value: assigned.rawValue)) }
        return try await call("GET", "/v1/interactions", query: filter + Self.pageQuery(limit: limit, cursor: cursor))
    }

    /// A page of an interaction's messages, oldest first; pass the page's `nextCursor` for the next one.
    public func messages(in interactionID: String, limit: Int? = nil, cursor: String? = nil) async throws -> Page<Message> {
        return try await call("GET", "/v1/interactions/\(Self.segment(interactionID))/messages",
                              query: Self.pageQuery(limit: limit, cursor: cursor))
    }

    /// Every message of an interaction so far, oldest first, page after page — the history to show before the
    /// live events of ``events(for:)`` (match them up by `seq`).
    public func allMessages(in interactionID: String, pageSize: Int = 100) -> AsyncThrowingStream<Message, any Error> {
        Self.walk { cursor in try await self.messages(in: interactionID, limit: pageSize, cursor: cursor) }
    }

    /// Sends a message.
    public func sendMessage(_ text: String, to interactionID: String) async throws -> Message {
        try await sendMessage(text, attachments: [], to: interactionID)
    }

    /// Sends a message with files uploaded to the interaction beforehand (``upload(_:type:filename:to:idempotencyKey:)``):
    /// `attachments` are their ids (``Attachment/id``), in the order to show them. With attachments, `text` may be
    /// empty. Each upload can be sent once, by its uploader, in the interaction it was uploaded to; the server
    /// refuses others with a 422 problem.
    public func sendMessage(_ text: String = "", attachments: [String], to interactionID: String) async throws -> Message {
        var body: [String: Any] = [:]
        if !text.isEmpty || attachments.isEmpty { body["text"] = text }
        if !attachments.isEmpty { body["attachment_ids"] = attachments }
        return try await call("POST", "/v1/interactions/\(Self.segment(interactionID))/messages",
                              encoded: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
    }

    /// Tells the other side whether the user is typing.
    public func setTyping(_ typing: Bool, in interactionID: String) async throws {
        let _: [String: Bool] = try await call("POST", "/v1/interactions/\(Self.segment(interactionID))/typing",
                                               body: ["typing": typing])
    }

    /// Reports a media state change.
    public func setMedia(_ kind: MediaKind, _ state: MediaState, in interactionID: String) async throws {
        let _: MediaChange = try await call("POST", "/v1/interactions/\(Self.segment(interactionID))/media",
                                            body: ["kind": kind.rawValue, "state": state.rawValue])
    }

    /// Marks everything up to event `eventID` of an interaction as read by the user (pass the `seq` of the latest
    /// message shown). The position never moves backwards, so calling it with an older id is harmless; an id beyond
    /// the interaction's log is refused (`/problems/unknown-event-id`).
    public func markRead(_ interaction: String, through eventID: Int64) async throws -> ReadPosition {
        try await call("POST", "/v1/interactions/\(Self.segment(interaction))/read",
                       encoded: try JSONSerialization.data(withJSONObject: ["event_id": eventID]))
    }

    /// Takes an unassigned interaction for the calling agent (agent apps). Claiming one the agent already holds
    /// succeeds again; one another agent holds fails with a 409 problem of type `/problems/already-assigned`.
    public func claim(_ interaction: String) async throws -> Interaction {
        try await call("POST", "/v1/interactions/\(Self.segment(interaction))/claim", body: [String: String]())
    }

    /// Assigns an interaction to the agent with user id `agentID`, whoever holds it, or unassigns it with nil
    /// (agent apps).
    public func assign(_ interaction: String, to agentID: String?) async throws -> Interaction {
        let body: [String: Any] = ["agent_id": agentID.map { $0 as Any } ?? NSNull()]
        return try await call("POST", "/v1/interactions/\(Self.segment(interaction))/assign",
                              encoded: try JSONSerialization.data(withJSONObject: body))
    }

    /// Ends an interaction.
    public func endInteraction(_ id: String) async throws -> Interaction {
        try await call("POST", "/v1/interactions/\(Self.segment(id))/end", body: [String: String]())
    }

    /// The session the token belongs to: who the user is, their role and when the token expires.
    public func currentSession() async throws -> Session {
        try await call("GET", "/v1/sessions/current")
    }

    /// Signs the user out: the session token stops working on every replica within seconds.
    public func revokeSession() async throws {
        _ = try await send("DELETE", try url("/v1/sessions/current", []), body: nil, headers: [:])
    }

    struct MediaChange: Decodable { let seq: Int64 }

    /// The `limit` and `cursor` query items of a page request, for those given.
    static func pageQuery(limit: Int?, cursor: String?) -> [URLQueryItem] {
        var query: [URLQueryItem] = []
        if let limit { query.append(URLQueryItem(name: "limit", value: String(limit))) }
        if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        return query
    }

    /// The elements of every page `load` returns, from the first (cursor nil) until one says it is the last.
    static func walk<Item: Sendable>(_ load: @escaping @Sendable (String?) async throws -> Page<Item>)
        -> AsyncThrowingStream<Item, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var cursor: String?
                    repeat {
                        let page = try await load(cursor)
                        for item in page.items { continuation.yield(item) }
                        cursor = page.hasMore ? page.nextCursor : nil
                    } while cursor != nil
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
