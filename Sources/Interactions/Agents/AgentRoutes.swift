import Accounts
import Foundation
import HTTPServer

/// Presence over HTTP: `POST /v1/agents/me/status` (an agent chooses online or away), `GET /v1/agents` (the tenant's
/// agents, for agents and the tenant's backend) and `GET /v1/support/status` (how many agents are online, for the
/// app's "We're online" or "Leave a message").
public struct AgentRoutes: Sendable {
    let presence: PresenceKeeper
    let guardian: AccessGuard

    /// The routes over `presence`, guarded by `guardian`.
    public init(presence: PresenceKeeper, guardian: AccessGuard) {
        self.presence = presence
        self.guardian = guardian
    }

    /// Adds the routes to `router`.
    public func register(on router: inout Router) {
        router.post("/v1/agents/me/status", guardian.require(.agent, choose))
        router.get("/v1/agents", guardian.require([.agent, .apiKey], list))
        router.get("/v1/support/status", guardian.require(.session, support))
    }

    struct StatusBody: RequestBody {
        let status: String
        enum CodingKeys: String, CodingKey, CaseIterable { case status }
    }

    @Sendable func choose(_ request: Request, _ principal: Principal) async throws -> Response {
        let body = try request.decodeJSON(StatusBody.self)
        guard let status = AgentStatus(rawValue: body.status), status != .offline else {
            throw Problem.badRequest("status must be online or away.", parameter: "status")
        }
        guard let agent = principal.userID else { throw AuthError.forbidden("Only an agent's session has a status.") }
        return try .json(try await presence.choose(status, tenant: principal.tenantID, agent: agent))
    }

    struct AgentList: Encodable { let items: [AgentSummary] }

    @Sendable func list(_ request: Request, _ principal: Principal) async throws -> Response {
        try .json(AgentList(items: try await presence.agents(of: principal.tenantID)))
    }

    struct SupportStatus: Encodable {
        let agentsOnline: Int64
        enum CodingKeys: String, CodingKey { case agentsOnline = "agents_online" }
    }

    @Sendable func support(_ request: Request, _ principal: Principal) async throws -> Response {
        try .json(SupportStatus(agentsOnline: try await presence.onlineCount(of: principal.tenantID)))
    }
}
