import Accounts
import Coordination
import Foundation
import HTTPServer
import Postgres

/// Interactions and their event log in Postgres. Every change appends its event in the same transaction, under
/// the interaction's row lock, so one interaction's events commit in `seq` order; `seq` counts within the
/// interaction (1, 2, 3…, no gaps). Each commit sends a notice (`<interaction id>:<seq>`, ids only) to every replica.
public struct InteractionStore: Sendable {
    /// The NOTIFY channel of interaction events.
    public static let channel = "switchboard_interactions"

    /// A store; queries run on the connections handed to each method (so callers choose the transaction).
    public init() {}

    /// Opens an interaction for the customer `principal` in one statement: the row, its `started` event, its
    /// automatic assignment when the tenant assigns automatically and an agent has room (the `assignment` event and
    /// the audit entry with it), its change for inbox streams and its notice. One round trip instead of six to
    /// nine; on a connection in a transaction (a request with an `Idempotency-Key`) it is one statement of it.
    public func create(subject: String?, for principal: Principal, on connection: PostgresConnection) async throws -> Interaction {
        let id = RandomUUID.make()
        let rows = try await connection.query(InteractionStore.createStatement, [
            id, principal.tenantID, principal.userID ?? "", subject,
            InteractionStore.payloadJSON(["state": InteractionState.started.rawValue]),
        ] + AuditLog.parameters("interaction.assigned", AuditTarget("interaction", id), tenant: principal.tenantID,
                                by: .system("automatic assignment")))
        return try InteractionStore.interaction(rows[0])
    }

    /// Opens interaction `$1` of tenant `$2` for customer `$3` with subject `$4`: the row (assigned to the
    /// ``AutoAssignment/candidate(tenant:)`` if any), the `state` event `$5`, then, when assigned, the `assignment`
    /// event (`by` null) and the audit entry (``AuditLog/call(from:)`` from `$6`); the change for inbox streams and
    /// the notice of the last event. Answers the interaction as its customer sees it.
    static let createStatement = PreparedStatement("""
        WITH \(AutoAssignment.candidate(tenant: "$2::uuid")),
        created AS (
            INSERT INTO interactions (id, tenant_id, customer_id, subject, assigned_agent_id, last_seq)
            SELECT $1::uuid, $2::uuid, $3, $4, c.agent_id, CASE WHEN c.agent_id IS NULL THEN 1 ELSE 2 END
            FROM (SELECT 1) AS one LEFT JOIN candidate c ON true
            RETURNING id, tenant_id, customer_id, subject, state, failure_reason, created_at, ended_at, assigned_agent_id,
                      last_seq
        ), appended AS (
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT id, 1, '\(Kind.state.rawValue)', $5::jsonb FROM created
            UNION ALL
            SELECT id, 2, '\(Kind.assignment.rawValue)',
                   jsonb_build_object('assigned_agent_id', assigned_agent_id, 'previous_agent_id', NULL, 'by', NULL)
            FROM created WHERE assigned_agent_id IS NOT NULL
        ), changed AS (
            INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, id FROM created
        )
        SELECT id, customer_id, subject, state, failure_reason, created_at, ended_at, assigned_agent_id,
               0::bigint AS unread_count, 0::bigint AS read_by_other_through,
               CASE WHEN assigned_agent_id IS NOT NULL THEN \(AuditLog.call(from: 6)) END AS audited,
               pg_notify('\(InteractionStore.channel)', id::text || ':' || last_seq) AS notified
        FROM created
        """)

    /// The interaction if `principal` may see it (agents see all of their tenant's, customers their own), with the
    /// unread count and the other side's read position as `principal` sees them.
    public func find(_ id: UUID, for principal: Principal, on connection: PostgresConnection) async throws -> Interaction? {
        let rows = try await connection.query(InteractionStore.findStatement,
                                              [id, principal.tenantID, InteractionStore.customerScope(principal)]
                                                  + InteractionStore.perspective(principal))
        return try rows.first.map(InteractionStore.interaction)
    }

    /// One interaction by id (`$1`) within tenant `$2`, limited to customer `$3` when not null, as side `$4` reading
    /// as `$5` sees it. Prepared, as are the writers' statements below: every call of a hot path would otherwise
    /// be parsed and planned again (each is a probe of a primary key, so one plan serves every value).
    static let findStatement = PreparedStatement("""
        SELECT \(InteractionStore.view(side: "$4::text", reader: "$5::text")) FROM interactions i
        WHERE i.id = $1::uuid AND i.tenant_id = $2::uuid AND ($3::text IS NULL OR i.customer_id = $3)
        """)

    /// Locks interaction `$1` of tenant `$2` (of customer `$3` when not null) and reads what a writer needs.
    static let lockStatement = PreparedStatement("""
        SELECT state, assigned_agent_id, last_seq FROM interactions
        WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
        FOR UPDATE
        """)

    /// Appends an event of kind `$2` with payload `$3` to interaction `$1`'s log under its next `seq`, keeps the
    /// interaction's message counters and inbox preview, and records the change for inbox streams.
    static let appendStatement = PreparedStatement("""
        WITH next AS (
            UPDATE interactions SET \(nextEvent(payload: "$3::jsonb", isMessage: isMessage))
            WHERE id = $1::uuid RETURNING last_seq, tenant_id),
        changed AS (INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next)
        INSERT INTO interaction_events (interaction_id, seq, kind, payload)
        SELECT $1::uuid, last_seq, $2::text, $3::jsonb FROM next
        RETURNING seq, created_at
        """)
    private static let isMessage = "$2::text = '\(Kind.message.rawValue)'"

    /// The assignments of an interaction's row for its next event, as SQL: the log's next `seq`, the message counters
    /// and the inbox preview, for the event with JSON payload `payload` (a message when `isMessage` holds).
    static func nextEvent(payload: String, isMessage: String) -> String {
        """
        last_seq = last_seq + 1,
        customer_messages = customer_messages + (\(isMessage) AND \(payload)->>'sender_role' = 'customer')::int,
        agent_messages = agent_messages + (\(isMessage) AND \(payload)->>'sender_role' = 'agent')::int,
        inbox_preview = CASE WHEN \(isMessage) THEN \(InboxMigrations.preview(
            id: "\(payload)->>'id'", kind: "'message'", text: "\(payload)->>'text'",
            role: "\(payload)->>'sender_role'", at: "now()")) ELSE inbox_preview END
        """
    }

    /// A plain event payload as the log stores it: JSON with sorted keys, nil values as null.
    /// Written straight into bytes: `JSONSerialization` (bridging every value, sorting through `NSString`) cost a
    /// fifth of a message POST's CPU.
    static func payloadJSON(_ payload: [String: String?]) -> String {
        var json = JSONBytes(capacity: payload.reduce(2) { $0 + $1.key.utf8.count + ($1.value?.utf8.count ?? 4) + 8 })
        json.raw("{")
        for (index, field) in payload.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { json.raw(",") }
            json.string(field.key)
            json.raw(":")
            json.stringOrNull(field.value)
        }
        json.raw("}")
        return json.text
    }

    /// Records a change of interaction `$1` that appends nothing to its log (a read position moving on an
    /// interaction that is over), for inbox streams.
    static let touchStatement = PreparedStatement("""
        INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, id FROM interactions WHERE id = $1::uuid
        RETURNING (SELECT last_seq FROM interactions WHERE id = $1::uuid) AS last_seq
        """)

    /// What a writer needs to know of an interaction it holds locked.
    public struct Locked: Sendable, Equatable {
        /// Its state when locked (no one else can change it until the transaction ends).
        public let state: InteractionState
        /// The agent assigned when locked.
        public let assignedAgentID: String?
        /// The log's last event id when locked.
        public let lastSeq: Int64
    }

    /// Locks the interaction's row for the rest of the transaction, if `principal` may see it. Every writer takes
    /// this lock before appending to the log, so state checks made under it hold until commit.
    public func lock(_ id: UUID, for principal: Principal, on connection: PostgresConnection) async throws -> Locked? {
        let rows = try await connection.query(InteractionStore.lockStatement,
                                              [id, principal.tenantID, InteractionStore.customerScope(principal)])
        guard let row = rows.first else { return nil }
        return Locked(state: InteractionState(rawValue: try row.decode("state")) ?? .failed,
                      assignedAgentID: try row.decode("assigned_agent_id"), lastSeq: try row.decode("last_seq"))
    }

    /// Locks the interaction as ``lock(_:for:on:)`` does, for a writer about to do `action`: throws
    /// ``InteractionError/notFound(_:)`` when `principal` may not see it and ``InteractionError/notAllowed(_:id:state:)``
    /// when its state forbids `action` (the lock then still holds until the transaction ends).
    @discardableResult
    public func lock(_ id: UUID, for principal: Principal, allowing action: InteractionState.Action,
                     on connection: PostgresConnection) async throws -> Locked {
        guard let locked = try await lock(id, for: principal, on: connection) else { throw InteractionError.notFound(id) }
        _ = try locked.state.allowing(action, on: id)
        return locked
    }

    /// Where the log of `id` stands, if `principal` may see the interaction: its last `seq` and whether it is over.
    public func logPosition(of id: UUID, for principal: Principal,
                            on connection: PostgresConnection) async throws -> (lastSeq: Int64, isOver: Bool)? {
        let key = LogPositionKey(id: id, principal: principal)
        return try await logPositions(of: [key], on: connection)[key].map { ($0.lastSeq, $0.isOver) }
    }

    /// An interaction as one caller may see it.
    struct LogPositionKey: Hashable, Sendable {
        let id: UUID
        let tenantID: UUID
        /// The customer the caller is (a customer sees only their own interactions); nil for agents and API keys.
        let customerID: String?

        init(id: UUID, principal: Principal) {
            self.id = id
            tenantID = principal.tenantID
            customerID = InteractionStore.customerScope(principal)
        }
    }

    /// Where a log stands: its last `seq`, and whether the interaction is over.
    struct LogPosition: Sendable, Equatable {
        let lastSeq: Int64
        let isOver: Bool
    }

    static let logPositionsStatement = PreparedStatement("""
        SELECT w.n, i.last_seq, \(InteractionState.isOverSQL("i.state")) AS over
        FROM unnest($1::uuid[], $2::uuid[], $3::text[]) WITH ORDINALITY AS w (id, tenant_id, customer_id, n)
        JOIN interactions i ON i.id = w.id AND i.tenant_id = w.tenant_id
                           AND (w.customer_id IS NULL OR i.customer_id = w.customer_id)
        """)

    /// The log positions of many (interaction, caller) pairs in one query; a pair whose caller may not see the
    /// interaction (another tenant's, another customer's) or that does not exist has no answer.
    func logPositions(of keys: [LogPositionKey], on connection: PostgresConnection) async throws -> [LogPositionKey: LogPosition] {
        let rows = try await connection.query(InteractionStore.logPositionsStatement, [
            PostgresArray(keys.map(\.id)), PostgresArray(keys.map(\.tenantID)), PostgresArray(keys.map(\.customerID)),
        ])
        var answers: [LogPositionKey: LogPosition] = [:]
        for row in rows {
            let index = Int(try row.decode("n", as: Int64.self)) - 1
            answers[keys[index]] = LogPosition(lastSeq: try row.decode("last_seq"), isOver: try row.decode("over"))
        }
        return answers
    }

    /// Which interactions a list shows by assignment.
    public enum AssignmentFilter: Sendable, Equatable {
        /// All, assigned or not.
        case any
        /// Only those nobody is assigned to.
        case unassigned
        /// Only those assigned to this agent.
        case agent(String)
    }

    /// A page of interactions visible to `principal`, newest first, optionally in one state and by assignment; each
    /// with the cursor that continues after it.
    public func list(for principal: Principal, state: InteractionState?, assigned: AssignmentFilter = .any, limit: Int,
                     after cursor: KeysetCursor?, on connection: PostgresConnection) async throws -> [(Interaction, KeysetCursor)] {
        let assignment = switch assigned {
        case .any: "AND $9::text IS NULL"
        case .unassigned: "AND i.assigned_agent_id IS NULL AND $9::text IS NULL"
        case .agent: "AND i.assigned_agent_id = $9::text"
        }
        var agent: String?
        if case .agent(let id) = assigned { agent = id }
        let rows = try await connection.query("""
            SELECT \(InteractionStore.view(side: "$7::text", reader: "$8::text")),
                   (extract(epoch FROM i.created_at) * 1000000)::bigint AS created_micros
            FROM interactions i
            WHERE i.tenant_id = $1::uuid AND ($2::text IS NULL OR i.customer_id = $2) AND ($3::text IS NULL OR i.state = $3)
              AND ($4::bigint IS NULL OR (i.created_at, i.id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid))
              \(assignment)
            ORDER BY i.created_at DESC, i.id DESC LIMIT $6
            """, [principal.tenantID, InteractionStore.customerScope(principal), state?.rawValue,
                  cursor?.micros, cursor?.id, limit] + InteractionStore.perspective(principal) + [agent])
        return try rows.map { row in
            (try InteractionStore.interaction(row), KeysetCursor(micros: try row.decode("created_micros"), id: try row.decode("id")))
        }
    }

    /// Moves an open interaction to `state` (ended or failed) and logs it; returns it as `principal` sees it.
    public func close(_ id: UUID, as state: InteractionState, reason: String?, by principal: Principal,
                      on connection: PostgresConnection) async throws -> Interaction {
        _ = try await connection.query("""
            UPDATE interactions SET state = $2, failure_reason = $3, ended_at = now() WHERE id = $1::uuid
            """, [id, state.rawValue, reason])
        let payload: [String: String?] = ["state": state.rawValue, "failure_reason": reason]
        try await append(.state, payload, to: id, on: connection)
        guard let interaction = try await find(id, for: principal, on: connection) else { throw InteractionError.notFound(id) }
        return interaction
    }

    /// Appends a message; returns it with its sequence number.
    public func addMessage(_ text: String, attachments: [Attachment] = [], from principal: Principal, to id: UUID,
                           on connection: PostgresConnection) async throws -> InteractionMessage {
        let messageID = RandomUUID.make().lowercased
        let (seq, createdAt): (Int64, Date)
        if attachments.isEmpty {
            let payload: [String: String?] = ["id": messageID, "sender_id": principal.userID,
                                              "sender_role": principal.role?.rawValue, "text": text]
            (seq, createdAt) = try await append(.message, payload, to: id, on: connection)
        } else {
            let payload = MessagePayload(id: messageID, senderID: principal.userID, senderRole: principal.role?.rawValue,
                                         text: text, attachments: attachments)
            (seq, createdAt) = try await append(.message, encoding: payload, to: id, on: connection)
        }
        return InteractionMessage(seq: seq, id: messageID, senderID: principal.userID ?? "",
                                  senderRole: principal.role?.rawValue ?? "", text: text, createdAt: createdAt,
                                  attachments: attachments.isEmpty ? nil : attachments)
    }

    /// A message event's payload when it carries attachments (their metadata, never their bytes).
    private struct MessagePayload: Encodable {
        let id: String
        let senderID: String?
        let senderRole: String?
        let text: String
        let attachments: [Attachment]
        enum CodingKeys: String, CodingKey {
            case id, text, attachments
            case senderID = "sender_id", senderRole = "sender_role"
        }
    }

    /// Logs a media state change.
    public func setMedia(_ kind: MediaKind, _ state: MediaState, from principal: Principal, on id: UUID,
                         on connection: PostgresConnection) async throws -> Int64 {
        let payload: [String: String?] = ["kind": kind.rawValue, "state": state.rawValue, "sender_id": principal.userID,
                                          "sender_role": principal.role?.rawValue]
        return try await append(.media, payload, to: id, on: connection).seq
    }

    /// A page of messages in order, after sequence number `after`.
    public func messages(of id: UUID, after: Int64?, limit: Int, on connection: PostgresConnection) async throws -> [InteractionMessage] {
        let rows = try await connection.query("""
            SELECT seq, payload->>'id' AS id, payload->>'sender_id' AS sender_id, payload->>'sender_role' AS sender_role,
                   payload->>'text' AS text, payload->'attachments' AS attachments, created_at,
                   (payload->>'redacted')::boolean AS redacted
            FROM interaction_events
            WHERE interaction_id = $1::uuid AND kind = '\(Kind.message.rawValue)' AND seq > coalesce($2::bigint, 0)
            ORDER BY seq LIMIT $3
            """, [id, after, limit])
        return try rows.map { row in
            InteractionMessage(seq: try row.decode("seq"), id: try row.decode("id"), senderID: try row.decode("sender_id"),
                               senderRole: try row.decode("sender_role"), text: try row.decode("text"),
                               createdAt: try row.decode("created_at"),
                               attachments: try row.decode("attachments", as: PostgresJSON?.self)
                                   .map { try JSON.decode([Attachment].self, from: $0.bytes) },
                               redacted: try row.decode("redacted", as: Bool?.self))
        }
    }

    @discardableResult
    func append(_ kind: Kind, _ payload: [String: String?], to id: UUID,
                on connection: PostgresConnection) async throws -> (seq: Int64, createdAt: Date) {
        try await append(kind, json: InteractionStore.payloadJSON(payload), to: id, on: connection)
    }

    /// Appends an event whose payload is `value` encoded as JSON (nil properties as null).
    @discardableResult
    func append(_ kind: Kind, encoding value: some Encodable, to id: UUID,
                on connection: PostgresConnection) async throws -> (seq: Int64, createdAt: Date) {
        try await append(kind, json: String(decoding: try JSON.encode(value), as: UTF8.self), to: id, on: connection)
    }

    @discardableResult
    private func append(_ kind: Kind, json: String, to id: UUID,
                        on connection: PostgresConnection) async throws -> (seq: Int64, createdAt: Date) {
        // The next id of this interaction's log, taken under its row lock (held to commit): no gaps, commit order.
        let rows = try await connection.query(InteractionStore.appendStatement, [id, kind.rawValue, json])
        let seq: Int64 = try rows[0].decode("seq")
        try await announce(.stored(id, seq: seq), on: connection)
        return (seq, try rows[0].decode("created_at"))
    }

    /// Records a change of `id` that logs no event (for inbox streams) and tells every replica.
    func touch(_ id: UUID, on connection: PostgresConnection) async throws {
        let rows = try await connection.query(InteractionStore.touchStatement, [id])
        guard let lastSeq: Int64 = try rows.first?.decode("last_seq") else { return }
        try await announce(.stored(id, seq: lastSeq), on: connection)
    }

    /// Sends `notice` on the channel; delivered when the connection's transaction commits.
    func announce(_ notice: InteractionNotice, on connection: PostgresConnection) async throws {
        try await connection.notify(channel: InteractionStore.channel, payload: notice.payload)
    }

    /// Customers are limited to their own interactions; agents (and the tenant's backend) see all.
    static func customerScope(_ principal: Principal) -> String? {
        principal.role == .customer ? principal.userID : nil
    }

    /// The side `principal` reads from, and whose position is theirs: (role, user id). The tenant's backend (an
    /// API key) sees an interaction from the agents' side, with the furthest agent position as its own.
    static func perspective(_ principal: Principal) -> [(any PostgresEncodable)?] {
        [principal.role?.rawValue ?? Role.agent.rawValue, principal.userID]
    }

    /// The select list of an interaction (`i`) as one caller sees it: `side` is the caller's role and `reader` their
    /// user id (null: the furthest position of the side), both as SQL parameters.
    static func view(side: String, reader: String) -> String {
        """
        i.id, i.customer_id, i.subject, i.state, i.failure_reason, i.created_at, i.ended_at, i.assigned_agent_id,
        \(unreadCount(of: "i", side: side, reader: reader)) AS unread_count,
        coalesce((SELECT max(r.read_through) FROM interaction_reads r
                  WHERE r.interaction_id = i.id AND r.reader_role <> \(side)), 0) AS read_by_other_through
        """
    }

    /// The other side's messages after the read position of `reader` (null: the furthest of `side`) in interaction
    /// row `row`, as SQL: the interaction's counter of them, less those the position covers (kept on the position).
    static func unreadCount(of row: String, side: String, reader: String) -> String {
        """
        (CASE WHEN \(side) = 'agent' THEN \(row).customer_messages ELSE \(row).agent_messages END
         - coalesce((SELECT max(r.messages_read) FROM interaction_reads r WHERE r.interaction_id = \(row).id
                     AND r.reader_role = \(side) AND (\(reader) IS NULL OR r.reader_id = \(reader))), 0))
        """
    }

    /// The read position of `reader` (null: the furthest of `side`) in `interaction`, 0 when none, as SQL.
    static func readThrough(of interaction: String, side: String, reader: String) -> String {
        """
        coalesce((SELECT max(r.read_through) FROM interaction_reads r WHERE r.interaction_id = \(interaction)
                  AND r.reader_role = \(side) AND (\(reader) IS NULL OR r.reader_id = \(reader))), 0)
        """
    }

    static func interaction(_ row: PostgresRow) throws -> Interaction {
        Interaction(id: try row.decode("id", as: UUID.self).lowercased, customerID: try row.decode("customer_id"),
                    subject: try row.decode("subject"),
                    state: InteractionState(rawValue: try row.decode("state")) ?? .failed,
                    failureReason: try row.decode("failure_reason"), createdAt: try row.decode("created_at"),
                    endedAt: try row.decode("ended_at"), assignedAgentID: try row.decode("assigned_agent_id"),
                    unreadCount: try row.decode("unread_count"), readByOtherThrough: try row.decode("read_by_other_through"))
    }
}
