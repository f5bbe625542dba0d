import Accounts
import Foundation
import Postgres

extension InteractionStore {
    /// How an assignment is asked for.
    public enum AssignmentRequest: Sendable, Equatable {
        /// The calling agent takes the interaction if nobody holds it (or they already do).
        case claim
        /// The interaction goes to this agent, or to nobody with nil, whoever held it.
        case assign(String?)
    }

    /// Changes who handles `id`, under the interaction's row lock, and appends an `assignment` event when the
    /// assignee changed (nothing is written when it did not: a repeated claim or assignment is a no-op). Returns
    /// the interaction as `principal` sees it.
    ///
    /// Throws ``InteractionError/notFound(_:)`` when `principal` may not see it,
    /// ``InteractionError/notAllowed(_:id:state:)`` when it is over, and for a claim
    /// ``InteractionError/alreadyAssigned(_:holder:)`` when another agent holds it. Concurrent claims queue on the row
    /// lock, so exactly one of them wins.
    public func assign(_ id: UUID, _ request: AssignmentRequest, by principal: Principal,
                       on connection: PostgresConnection) async throws -> Interaction {
        let locked = try await lock(id, for: principal, allowing: .assign, on: connection)
        let assignee: String?
        switch request {
        case .claim:
            guard let agent = principal.userID else { throw InteractionError.notFound(id) }
            if let holder = locked.assignedAgentID, holder != agent {
                throw InteractionError.alreadyAssigned(id, holder: holder)
            }
            assignee = agent
        case .assign(let agent):
            assignee = agent
        }
        if assignee != locked.assignedAgentID {
            _ = try await connection.query("UPDATE interactions SET assigned_agent_id = $2 WHERE id = $1::uuid", [id, assignee])
            let payload: [String: String?] = ["assigned_agent_id": assignee, "previous_agent_id": locked.assignedAgentID,
                                              "by": principal.userID ?? "api"]
            try await append(.assignment, payload, to: id, on: connection)
        }
        guard let interaction = try await find(id, for: principal, on: connection) else { throw InteractionError.notFound(id) }
        return interaction
    }
}
