import Accounts
import Coordination
import Foundation
import Postgres

extension InteractionStore {
    /// What a message POST that was stored in one statement answers.
    public enum AloneOutcome: Sendable, Equatable {
        /// Stored: the answer's JSON, as the statement assembled it (and recorded it, under a key).
        case stored([UInt8])
        /// Not stored, because the request's key was already taken (by this request before, or by another):
        /// the answer recorded under it decides.
        case keyTaken
    }

    /// A message without attachments appended in one statement that is its own transaction: the interaction's row is
    /// taken by the update (which waits for a writer holding it, then sees its state as that writer left it), the
    /// event, its change for inbox streams, its notice and — with an `Idempotency-Key` — the record of its answer go
    /// with it, and the row lock is held until the statement commits: the guarantees of
    /// ``lock(_:for:allowing:on:)``, ``addMessage(_:attachments:from:to:on:)`` and `IdempotentWrites.run` in a
    /// transaction, in one round trip instead of five to seven. `connection` must not be in a transaction.
    ///
    /// Throws ``InteractionError`` when the message may not be stored; a caller holding a key asks first what the
    /// key recorded (a retry of a request that was stored before the interaction ended still gets its answer).
    public func addMessageAlone(_ text: String, from principal: Principal, to id: UUID,
                                recordingUnder key: IdempotentWrites.Key?,
                                on connection: PostgresConnection) async throws -> AloneOutcome {
        // What does not wait is done out of line: the parameters' nine existentials, the errors and the decoded
        // columns would otherwise each take a slot in this frame, held by every message POST's task while it waits.
        let rows: PostgresRows
        do {
            rows = try await connection.query(InteractionStore.messageAloneStatement,
                                              Self.messageAloneParameters(text, from: principal, to: id, recordingUnder: key))
        } catch {
            if Self.tookKey(error) { return .keyTaken }
            throw error
        }
        switch try Self.messageAloneAnswer(rows, id: id) {
        case .appended(let answer): return .stored(answer)
        case .over(let seen): throw try await refusal(of: id, seen: seen, on: connection)
        }
    }

    /// What ``messageAloneStatement`` answered for an interaction the caller has.
    private enum AloneAnswer {
        /// Appended: the answer's JSON.
        case appended([UInt8])
        /// Not appended: the interaction is over; its state as the statement's snapshot saw it.
        case over(seen: String)
    }

    /// ``messageAloneStatement``'s parameters for a text message.
    @inline(never)
    private static func messageAloneParameters(_ text: String, from principal: Principal, to id: UUID,
                                               recordingUnder key: IdempotentWrites.Key?) -> [(any PostgresEncodable)?] {
        let messageID = RandomUUID.make().lowercased
        let pieces = InteractionMessage.statementPieces(id: messageID, senderID: principal.userID,
                                                        senderRole: principal.role?.rawValue, text: text)
        return [id, principal.tenantID, InteractionStore.customerScope(principal), pieces.payload,
                pieces.middle, pieces.tail, key?.owner, key?.key, key?.fingerprint]
    }

    /// Whether `error` is the statement finding its idempotency key taken.
    @inline(never)
    private static func tookKey(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.isUniqueViolation && error.constraint == "idempotency_keys_pkey"
    }

    /// What ``messageAloneStatement`` answered; throws ``InteractionError/notFound(_:)`` when the caller has no such
    /// interaction.
    @inline(never)
    private static func messageAloneAnswer(_ rows: PostgresRows, id: UUID) throws -> AloneAnswer {
        guard let row = rows.first, let state = try row.decode("state", as: String?.self) else {
            throw InteractionError.notFound(id)
        }
        guard let answer = try row.decode("answer", as: String?.self) else { return .over(seen: state) }
        return .appended(Array(answer.utf8))
    }

    /// Why a message was not appended to `id`: the interaction is over, as its row says now (`seen`, the statement's
    /// snapshot, if the row is gone), which the snapshot may not have seen (it ended while this statement waited for
    /// its row).
    @inline(never)
    private func refusal(of id: UUID, seen: String, on connection: PostgresConnection) async throws -> InteractionError {
        let now = try await connection.query("SELECT state FROM interactions WHERE id = $1::uuid", [id])
        let current = InteractionState(rawValue: try now.first?.decode("state", as: String.self) ?? seen) ?? .failed
        return InteractionError.notAllowed(.message, id: id, state: current)
    }

    /// Interaction `$1` of tenant `$2` (of customer `$3` when not null) gets message payload `$4` appended if it is
    /// still `started`, with what ``appendStatement`` keeps, and its notice; when `$7` (the principal) is not null,
    /// the answer is recorded under key `$8` for request bytes `$9` (a key already taken fails the whole statement
    /// with a unique violation, after waiting for a statement still holding it). Answers the state the statement's
    /// snapshot saw (null: no such interaction for this caller) and the answer's JSON (null: not appended, the
    /// interaction is over), assembled from ``InteractionMessage/answerHead``, the time, `$5`, the seq and `$6`.
    static let messageAloneStatement = PreparedStatement("""
        WITH target AS (
            SELECT id, state FROM interactions
            WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
        ), next AS (
            UPDATE interactions SET \(nextEvent(payload: "$4::jsonb", isMessage: "true"))
            WHERE id = (SELECT id FROM target) AND state = '\(InteractionState.started.rawValue)'
            RETURNING last_seq, tenant_id
        ), changed AS (
            INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next
        ), appended AS (
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT $1::uuid, last_seq, '\(Kind.message.rawValue)', $4::jsonb FROM next
            RETURNING seq, '\(InteractionMessage.answerHead)'
                || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || $5 || seq || $6 AS answer
        ), recorded AS (
            INSERT INTO idempotency_keys (tenant_id, principal, key, request_hash, status, headers, body)
            SELECT $2::uuid, $7, $8, sha256($9::bytea), 201, '{"Content-Type": "application/json"}',
                   convert_to(answer, 'UTF8')
            FROM appended WHERE $7::text IS NOT NULL
        )
        SELECT (SELECT state FROM target) AS state, a.answer,
               CASE WHEN a.seq IS NOT NULL THEN pg_notify('\(InteractionStore.channel)', $1::text || ':' || a.seq) END AS notified
        FROM (SELECT 1) AS one LEFT JOIN appended a ON true
        """)
}

extension InteractionStore {
    /// Tells every replica's subscribers of `id` that `principal` started or stopped typing, in one statement that
    /// is its own transaction: the interaction's row is locked (waiting for a writer holding it, then seen as that
    /// writer left it) and the notice sent only while it is `started`, so no typing follows its end — what
    /// ``lock(_:for:allowing:on:)`` then a notice in a transaction kept, in one round trip instead of four.
    /// `connection` must not be in a transaction.
    public func announceTypingAlone(_ isTyping: Bool, by principal: Principal, in id: UUID,
                                    on connection: PostgresConnection) async throws {
        let notice = InteractionNotice.typing(id, isTyping: isTyping, role: principal.role?.rawValue ?? "-",
                                              user: principal.userID ?? "")
        let rows = try await connection.query(InteractionStore.typingAloneStatement, [
            id, principal.tenantID, InteractionStore.customerScope(principal), notice.payload,
        ])
        guard let text = try rows.first?.decode("state", as: String.self) else { throw InteractionError.notFound(id) }
        _ = try (InteractionState(rawValue: text) ?? .failed).allowing(.typing, on: id)
    }

    /// Locks interaction `$1` of tenant `$2` (of customer `$3` when not null) and sends notice `$4` if it is
    /// `started`; answers its state (no row: no such interaction for this caller).
    static let typingAloneStatement = PreparedStatement("""
        WITH target AS (
            SELECT state FROM interactions
            WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
            FOR UPDATE
        )
        SELECT state, CASE WHEN state = '\(InteractionState.started.rawValue)'
                           THEN pg_notify('\(InteractionStore.channel)', $4) END AS notified
        FROM target
        """)
}

