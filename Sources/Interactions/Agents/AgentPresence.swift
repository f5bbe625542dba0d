import Foundation

/// An agent's status as others see it: what it chose, while it holds an inbox stream on some replica (or lost its
/// last one less than the grace ago); `offline` otherwise.
public enum AgentStatus: String, Sendable, Codable, CaseIterable {
    case online, away, offline
}

/// One agent of a tenant, as `GET /v1/agents` lists it.
public struct AgentSummary: Sendable, Codable, Equatable {
    /// The agent's user id.
    public var agentID: String
    /// Online, away or offline.
    public var status: AgentStatus
    /// Interactions assigned to it that are still `started`.
    public var openInteractions: Int64
    /// When a replica last saw it holding an inbox stream (to within 30 s); nil if never.
    public var lastSeenAt: Date?

    enum CodingKeys: String, CodingKey {
        case status
        case agentID = "agent_id", openInteractions = "open_interactions", lastSeenAt = "last_seen_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(agentID, forKey: .agentID)
        try container.encode(status, forKey: .status)
        try container.encode(openInteractions, forKey: .openInteractions)
        try container.encode(lastSeenAt, forKey: .lastSeenAt)
    }
}

/// A change of an agent's status, as the presence sweep found it (and announced it).
struct AgentStatusChange: Sendable, Equatable {
    let tenantID: UUID
    let agentID: String
    let status: AgentStatus

    /// The notice on the interactions channel: `agent:<tenant>:<status>:<agent>` (the agent id may hold colons).
    var payload: String { "agent:\(tenantID.lowercased):\(status.rawValue):\(agentID)" }

    init(tenantID: UUID, agentID: String, status: AgentStatus) {
        self.tenantID = tenantID
        self.agentID = agentID
        self.status = status
    }

    init?(payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "agent", let tenant = UUID(uuidString: String(parts[1])),
              let status = AgentStatus(rawValue: String(parts[2])) else { return nil }
        self.init(tenantID: tenant, agentID: String(parts[3]), status: status)
    }
}
