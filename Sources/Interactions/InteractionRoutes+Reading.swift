import Accounts
import Foundation
import HTTPServer
import Postgres

/// Read positions and assignment: `POST …/read`, `POST …/claim`, `POST …/assign`, and the `assigned` list filter.
extension InteractionRoutes {
    struct ReadBody: RequestBody {
        let eventID: Int64
        enum CodingKeys: String, CodingKey, CaseIterable { case eventID = "event_id" }

        /// `{"event_id": N}` with a whole N within 64 bits, read from the strict check's outline.
        static func decoded(from outline: StrictJSON.Outline) -> ReadBody? {
            guard outline.isObject, outline.keys == ["event_id"], let text = outline.numbers["event_id"],
                  let eventID = Int64(text) else { return nil }
            return ReadBody(eventID: eventID)
        }
    }

    /// `POST /v1/interactions/{id}/read` `{"event_id": N}`: the caller has read everything up to event N. 200 with
    /// the caller's position (which never moves backwards), on interactions in any state.
    @Sendable func read(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let body = try request.decodeJSON(ReadBody.self)
        guard body.eventID >= 0 else { throw Problem.badRequest("event_id must be an event id (0 or more).", parameter: "event_id") }
        // Without an `Idempotency-Key` (marking read is idempotent by itself): one statement.
        if try IdempotentWrites.key(of: request, principal) == nil, let position = try await pool.withConnection({ [store] connection in
            try await store.markReadAlone(through: body.eventID, by: principal, in: id, on: connection)
        }) {
            return .json(position)
        }
        return try await writes.run(request, principal) { [store] connection in
            .json(try await store.markRead(through: body.eventID, by: principal, in: id, on: connection))
        }
    }

    /// `POST /v1/interactions/{id}/claim` (agents): the caller takes the interaction unless another agent holds it.
    @Sendable func claim(_ request: Request, _ principal: Principal) async throws -> Response {
        try await assignment(InteractionRequest.id(request), .claim, audited: "interaction.claimed", request, principal)
    }

    /// The body of `assign`: `agent_id` must be present, a user id or null (unassign).
    struct AssignBody: RequestBody {
        let agentID: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case agentID = "agent_id" }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard container.contains(.agentID) else {
                throw DecodingError.keyNotFound(CodingKeys.agentID, .init(codingPath: [], debugDescription: "required"))
            }
            agentID = try container.decode(String?.self, forKey: .agentID)
        }
    }

    /// `POST /v1/interactions/{id}/assign` `{"agent_id": "…" | null}` (agents and the tenant's backend).
    @Sendable func assign(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let body = try request.decodeJSON(AssignBody.self)
        if let agent = body.agentID { try Problem.requireLength(agent, of: "agent_id", in: 1 ... 200) }
        return try await assignment(id, .assign(body.agentID),
                                    audited: body.agentID == nil ? "interaction.unassigned" : "interaction.assigned",
                                    request, principal)
    }

    /// Claims or assigns in one statement; with an `Idempotency-Key`, in the transaction that records its answer.
    private func assignment(_ id: UUID, _ change: InteractionStore.AssignmentRequest, audited action: String,
                            _ request: Request, _ principal: Principal) async throws -> Response {
        try await writes.runStatement(request, principal) { [store] connection in
            .json(try await store.assign(id, change, by: principal, audited: action, AuditContext(principal, request),
                                             on: connection))
        }
    }

    /// The `assigned` query parameter: `any` (default), `none`, or `me` (agents only).
    static func assignmentFilter(_ request: Request, _ principal: Principal) throws -> InteractionStore.AssignmentFilter {
        switch request.queryValue("assigned") {
        case nil, "any": return .any
        case "none": return .unassigned
        case "me":
            guard principal.role == .agent, let agent = principal.userID else {
                throw Problem.badRequest("assigned=me is for agents.", parameter: "assigned")
            }
            return .agent(agent)
        default:
            throw Problem.badRequest("assigned must be me, none or any.", parameter: "assigned")
        }
    }
}
