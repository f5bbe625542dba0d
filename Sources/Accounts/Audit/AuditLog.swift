import Foundation
import Postgres

/// Writes audit entries in the transaction of the action they record: an action that fails or rolls back leaves none.
public enum AuditLog {
    /// Records `action` (`session.created`, `interaction.claimed`, …) on `target` in `tenant`, by `context`, on
    /// `connection` (which must be in the action's transaction, or run the action in the same statement).
    public static func record(_ action: String, _ target: AuditTarget, tenant: UUID, by context: AuditContext,
                              on connection: PostgresConnection) async throws {
        _ = try await connection.query("SELECT \(call(from: 1))", parameters(action, target, tenant: tenant, by: context))
    }

    /// The `audit_record(…)` call with its eight parameters numbered from `first`, for a statement that records its
    /// own action (in a CTE, say) in one round trip.
    public static func call(from first: Int) -> String {
        let p = (first ..< first + 8).map { "$\($0)" }
        return "audit_record(\(p[0])::uuid, \(p[1]), \(p[2]), \(p[3]), \(p[4]), \(p[5]), \(p[6]), \(p[7]))"
    }

    /// The parameters of ``call(from:)``, in its order.
    public static func parameters(_ action: String, _ target: AuditTarget, tenant: UUID,
                                  by context: AuditContext) -> [(any PostgresEncodable)?] {
        [tenant, context.actorKind, context.actorID, action, target.kind, target.id, context.requestID, context.address]
    }
}
