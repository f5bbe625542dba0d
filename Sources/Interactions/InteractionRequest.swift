import Accounts
import Foundation
import HTTPServer
import Postgres

/// Shared parameter checks and the lifecycle guard of the interaction routes.
enum InteractionRequest {
    static let notFound = Problem.notFound("No such interaction.")

    static func id(_ request: Request) throws -> UUID {
        guard let id = UUID(uuidString: request.parameter("id")) else { throw notFound }
        return id
    }

    /// Locks the interaction and checks that `action` is allowed in its state: 404 when the caller may not see
    /// it, 409 when the lifecycle forbids the action.
    static func open(_ id: UUID, for principal: Principal, action: InteractionState.Action, store: InteractionStore,
                     on connection: PostgresConnection) async throws {
        guard let locked = try await store.lock(id, for: principal, on: connection) else { throw notFound }
        try allow(action, in: locked.state)
    }

    /// 409 when an interaction in `state` may not take `action`.
    static func allow(_ action: InteractionState.Action, in state: InteractionState) throws {
        guard state.after(action) != nil else {
            throw Problem(status: 409, title: "Conflict",
                          detail: "The interaction is \(state.rawValue); it cannot take this action.",
                          extensions: ["state": state.rawValue])
        }
    }
}
