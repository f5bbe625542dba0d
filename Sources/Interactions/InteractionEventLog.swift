import Foundation
import Postgres

/// One event as subscribers receive it: stored events carry their `seq` (the SSE `id`); typing does not.
public struct InteractionStreamEvent: Sendable, Equatable {
    /// The event's place in the interaction's log; nil for ephemeral events (typing).
    public let seq: Int64?
    /// `state`, `message`, `typing` or `media` (the SSE `event`).
    public let kind: String
    /// The JSON data.
    public let data: String
    /// Whether this is the interaction's last event (it ended or failed).
    public let terminal: Bool

    /// Not an event: a keep-alive the stream writes as a comment, so dead subscribers are noticed.
    static let heartbeat = InteractionStreamEvent(seq: nil, kind: "", data: "", terminal: false)

    /// Whether this is the keep-alive.
    var isHeartbeat: Bool { kind.isEmpty }

    /// The last event of a stream whose session was revoked or expired: a `reconnect` event with the reason, after
    /// which the client fetches a fresh token and resumes from its last id.
    static func credentialsEnded(_ reason: String) -> InteractionStreamEvent {
        InteractionStreamEvent(seq: nil, kind: "reconnect", data: #"{"reason":"\#(reason)"}"#, terminal: true)
    }
}

/// Reads the event log for replay and live dispatch.
struct InteractionEventLog: Sendable {
    let pool: PostgresPool

    /// Stored events of `id` after `seq` (and up to `through`, when given), in order.
    /// With `after` nil: the last event only.
    func events(of id: UUID, after seq: Int64?, through last: Int64? = nil) async throws -> [InteractionStreamEvent] {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT seq, kind, (payload || jsonb_build_object('created_at', created_at))::text AS data,
                       kind = 'state' AND payload->>'state' <> 'started' AS terminal
                FROM interaction_events
                WHERE interaction_id = $1::uuid
                  AND seq > coalesce($2::bigint, (SELECT last_seq - 1 FROM interactions WHERE id = $1::uuid))
                  AND ($3::bigint IS NULL OR seq <= $3::bigint)
                ORDER BY seq
                """, [id, seq, last])
        }
        return try rows.map { row in
            InteractionStreamEvent(seq: try row.decode("seq"), kind: try row.decode("kind"), data: try row.decode("data"),
                                   terminal: try row.decode("terminal"))
        }
    }

    /// The last event of `id`'s log, if it has any.
    func latest(of id: UUID) async throws -> InteractionStreamEvent? {
        try await events(of: id, after: nil).last
    }

    /// The interaction's current state as one `state` event, with the log's latest `seq` (read together).
    func snapshot(of id: UUID) async throws -> InteractionStreamEvent? {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT i.state, jsonb_build_object('state', i.state, 'failure_reason', i.failure_reason,
                                                   'subject', i.subject, 'snapshot', true)::text AS data,
                       i.last_seq AS seq
                FROM interactions i WHERE i.id = $1::uuid
                """, [id])
        }
        guard let row = rows.first else { return nil }
        return InteractionStreamEvent(seq: try row.decode("seq"), kind: "state", data: try row.decode("data"),
                                      terminal: try row.decode("state", as: String.self) != "started")
    }
}
