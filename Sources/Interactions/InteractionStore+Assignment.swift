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

    /// Changes who handles `id` in one statement: the interaction's row lock, the check, the new assignee, the
    /// `assignment` event when the assignee changed (nothing is logged when it did not: a repeated claim or
    /// assignment is a no-op), its notice and the audit entry `action` by `context`. One round trip instead of
    /// seven; on a connection in a transaction (a request with an `Idempotency-Key`) it is one statement of it.
    /// Returns the interaction as `principal` sees it.
    ///
    /// Throws ``InteractionError/notFound(_:)`` when `principal` may not see it,
    /// ``InteractionError/notAllowed(_:id:state:)`` when it is over, and for a claim
    /// ``InteractionError/alreadyAssigned(_:holder:)`` when another agent holds it. Concurrent claims queue on the row
    /// lock, and each decides on the row as the one before left it, so exactly one of them wins. The unread counts
    /// of the answer are those of the statement's snapshot (a read position moved while it waited for the row is
    /// not in them; the position's own answer and the inbox have it).
    public func assign(_ id: UUID, _ request: AssignmentRequest, by principal: Principal, audited action: String,
                       _ context: AuditContext, on connection: PostgresConnection) async throws -> Interaction {
        let assignee: String?
        switch request {
        case .claim:
            guard let agent = principal.userID else { throw InteractionError.notFound(id) }
            assignee = agent
        case .assign(let agent):
            assignee = agent
        }
        let rows = try await connection.query(InteractionStore.assignStatement, [
            id, principal.tenantID, InteractionStore.customerScope(principal), assignee, request == .claim,
            principal.userID ?? "api",
        ] + InteractionStore.perspective(principal)
          + AuditLog.parameters(action, AuditTarget("interaction", id), tenant: principal.tenantID, by: context))
        guard let row = rows.first else { throw InteractionError.notFound(id) }
        let state = InteractionState(rawValue: try row.decode("state")) ?? .failed
        _ = try state.allowing(.assign, on: id)
        if let holder = try row.decode("holder", as: String?.self), try row.decode("refused", as: Bool.self) {
            throw InteractionError.alreadyAssigned(id, holder: holder)
        }
        return try InteractionStore.interaction(row)
    }

    /// Interaction `$1` of tenant `$2` (of customer `$3` when not null) goes to agent `$4` (null: nobody) by `$6`,
    /// unless it is over or — for a claim (`$5`) — another agent holds it: the row is locked (a writer holding it is
    /// waited for, and the row then read as it left it), the assignee changed, the `assignment` event logged with
    /// what ``appendStatement`` keeps and its notice sent when the assignee changed, and the audit entry
    /// (``AuditLog/call(from:)`` from `$9`) recorded when the request succeeds. Answers the state and the holder as
    /// locked, whether the claim was refused, and the interaction as side `$7` reading as `$8` sees it afterwards.
    static let assignStatement = PreparedStatement("""
        WITH target AS (
            SELECT id, tenant_id, customer_id, subject, state, failure_reason, created_at, ended_at, assigned_agent_id,
                   customer_messages, agent_messages
            FROM interactions
            WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
            FOR UPDATE
        ), decided AS (
            SELECT t.*, t.state = '\(InteractionState.started.rawValue)' AS allowed,
                   $5::bool AND t.assigned_agent_id IS NOT NULL AND t.assigned_agent_id IS DISTINCT FROM $4::text AS refused
            FROM target t
        ), next AS (
            UPDATE interactions SET assigned_agent_id = $4::text, \(nextEvent(payload: "'{}'::jsonb", isMessage: "false"))
            WHERE id = (SELECT id FROM decided
                        WHERE allowed AND NOT refused AND assigned_agent_id IS DISTINCT FROM $4::text)
            RETURNING last_seq, tenant_id
        ), changed AS (
            INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next
        ), appended AS (
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT $1::uuid, last_seq, '\(Kind.assignment.rawValue)',
                   jsonb_build_object('assigned_agent_id', $4::text, 'by', $6::text,
                                      'previous_agent_id', (SELECT assigned_agent_id FROM decided))
            FROM next
            RETURNING seq
        ), answer AS (
            SELECT id, customer_id, subject, state, failure_reason, created_at, ended_at, customer_messages, agent_messages,
                   CASE WHEN allowed AND NOT refused THEN $4::text ELSE assigned_agent_id END AS assigned_agent_id,
                   assigned_agent_id AS holder, allowed, refused
            FROM decided
        )
        SELECT i.holder, i.refused, \(view(side: "$7::text", reader: "$8::text")),
               CASE WHEN i.allowed AND NOT i.refused THEN \(AuditLog.call(from: 9)) END AS audited,
               CASE WHEN a.seq IS NOT NULL THEN pg_notify('\(InteractionStore.channel)', $1::text || ':' || a.seq) END AS notified
        FROM answer i LEFT JOIN appended a ON true
        """)
}
