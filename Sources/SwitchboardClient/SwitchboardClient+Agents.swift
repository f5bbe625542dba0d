import Foundation

extension SwitchboardClient {
    /// The agent's live inbox: every change to the tenant's interactions in view (`assigned`, `states`; by default
    /// all assignments, `started` only) — first a snapshot of what is in view, then ``InboxEvent/snapshotEnd(count:)``,
    /// then live changes, notes and agents' statuses. It resumes by itself after dropped connections, restarts and
    /// token refreshes, with nothing lost or repeated; if the server cannot resume, it sends ``InboxEvent/reset`` and
    /// a fresh snapshot. Holding it makes the agent present (see ``setStatus(_:)``). Cancel the iterating task, or
    /// break out of the loop, to close it.
    public func inbox(assigned: AssignmentFilter = .any, states: [Interaction.State] = [.started]) -> AsyncStream<InboxEvent> {
        let query = [URLQueryItem(name: "assigned", value: assigned.rawValue),
                     URLQueryItem(name: "state", value: states.map(\.rawValue).joined(separator: ","))]
        guard let url = try? url("/v1/inbox/events", query) else { return AsyncStream { $0.finish() } }
        let (stream, continuation) = AsyncStream.makeStream(of: InboxEvent.self)
        let connection = InboxConnection(url: url, tokenProvider: tokenProvider, configuration: eventConfiguration,
                                         policy: eventPolicy, continuation: continuation)
        let task = Task { await connection.run() }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Writes a private note on an interaction (agents; also after it ended). Customers never see notes.
    public func addNote(_ text: String, to interactionID: String) async throws -> Note {
        try await call("POST", "/v1/interactions/\(Self.segment(interactionID))/notes", body: ["text": text])
    }

    /// A page of an interaction's notes, oldest first (agents).
    public func notes(in interactionID: String, limit: Int? = nil, cursor: String? = nil) async throws -> Page<Note> {
        var query: [URLQueryItem] = []
        if let limit { query.append(URLQueryItem(name: "limit", value: String(limit))) }
        if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        return try await call("GET", "/v1/interactions/\(Self.segment(interactionID))/notes", query: query)
    }

    /// Chooses `online` or `away` for the calling agent; returns how others now see it.
    public func setStatus(_ status: AgentStatus) async throws -> Agent {
        try await call("POST", "/v1/agents/me/status", body: ["status": status.rawValue])
    }

    /// The tenant's agents and their status (agents and the tenant's backend).
    public func agents() async throws -> [Agent] {
        let list: AgentList = try await call("GET", "/v1/agents")
        return list.items
    }

    /// How many agents are online now: for "We're online" or "Leave a message".
    public func agentsOnline() async throws -> Int64 {
        let body: SupportStatusBody = try await call("GET", "/v1/support/status")
        return body.agentsOnline
    }

    /// The tenant's support settings (the tenant's backend, with its API key).
    public func settings() async throws -> SupportSettings {
        try await call("GET", "/v1/settings")
    }

    /// Changes the tenant's support settings; nil leaves a setting as it is (the tenant's backend).
    public func updateSettings(autoAssign: String? = nil, maxOpenPerAgent: Int? = nil) async throws -> SupportSettings {
        var body: [String: Any] = [:]
        if let autoAssign { body["auto_assign"] = autoAssign }
        if let maxOpenPerAgent { body["max_open_per_agent"] = maxOpenPerAgent }
        return try await call("PATCH", "/v1/settings", encoded: try JSONSerialization.data(withJSONObject: body))
    }

    /// Sets how many days ended interactions are kept (nil: kept until deleted by hand); the tenant's backend.
    public func setRetention(days: Int?) async throws -> SupportSettings {
        let body: [String: Any] = ["retention_days": days.map { $0 as Any } ?? NSNull()]
        return try await call("PATCH", "/v1/settings", encoded: try JSONSerialization.data(withJSONObject: body))
    }
}
