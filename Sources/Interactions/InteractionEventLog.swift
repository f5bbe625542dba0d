import Foundation
import Postgres

/// Reads the event log for replay and live dispatch.
struct InteractionEventLog: Sendable {
    let pool: PostgresPool

    /// Stored events of `id` after `seq`, in order. With `after` nil: the last event only.
    func events(of id: UUID, after seq: Int64?) async throws -> [InteractionStreamEvent] {
        try await events(in: [Range(id: id, after: seq, through: nil)])[id] ?? []
    }

    /// One interaction's part of a batched read: its events after `after` (nil: its latest event only) and up to
    /// `through` (nil: all of them).
    struct Range: Sendable, Equatable {
        var id: UUID
        var after: Int64?
        var through: Int64?
    }

    /// The batched read of `events(in:)`: ranges of interaction ids (`$1`), after (`$2`) and through (`$3`). Each
    /// event says whether it is the interaction's final one (a `state` event entering a state that is over).
    static let eventsSQL = """
        SELECT r.id AS interaction_id, e.seq, e.kind,
               (e.payload || jsonb_build_object('created_at', e.created_at))::text AS data,
               e.kind = '\(InteractionStore.Kind.state.rawValue)'
               AND \(InteractionState.isOverSQL("e.payload->>'state'")) AS terminal
        FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS r (id, after, through)
        CROSS JOIN LATERAL (
            SELECT ev.seq, ev.kind, ev.payload, ev.created_at FROM interaction_events ev
            WHERE ev.interaction_id = r.id
              AND ev.seq > coalesce(r.after, (SELECT last_seq - 1 FROM interactions WHERE id = r.id))
              AND (r.through IS NULL OR ev.seq <= r.through)
            ORDER BY ev.seq
        ) e
        ORDER BY r.id, e.seq
        """

    /// The events of many interactions in one query (live dispatch of a run of notices, catch-up after missed
    /// ones): for each range, its events after `after` up to `through`, by interaction, in `seq` order.
    /// Interactions are matched by id alone, as the single read does: the ids come from this service's own notices
    /// and subscriptions, which were authorized when they were made.
    func events(in ranges: [Range]) async throws -> [UUID: [InteractionStreamEvent]] {
        guard !ranges.isEmpty else { return [:] }
        let ids = PostgresArray(ranges.map(\.id))
        let after = PostgresArray(ranges.map(\.after))
        let through = PostgresArray(ranges.map(\.through))
        let rows = try await pool.withConnection { connection in
            try await connection.query(InteractionEventLog.eventsSQL, [ids, after, through])
        }
        var events: [UUID: [InteractionStreamEvent]] = [:]
        for row in rows {
            let id: UUID = try row.decode("interaction_id")
            events[id, default: []].append(InteractionStreamEvent(seq: try row.decode("seq"),
                                                                  kind: .logged(try row.decode("kind")),
                                                                  data: try row.decode("data"),
                                                                  terminal: try row.decode("terminal")))
        }
        return events
    }

    /// The current state of each interaction in `ids` as one `state` event with the log's latest `seq` (read
    /// together), in one query; ids that name no interaction are absent. Matched by id alone: callers have checked
    /// the caller's right to see each one.
    func snapshots(of ids: [UUID]) async throws -> [UUID: InteractionStreamEvent] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT i.id, \(InteractionState.isOverSQL("i.state")) AS terminal,
                       jsonb_build_object('state', i.state, 'failure_reason', i.failure_reason,
                                                         'subject', i.subject, 'snapshot', true)::text AS data,
                       i.last_seq AS seq
                FROM interactions i WHERE i.id = ANY($1::uuid[])
                """, [PostgresArray(ids)])
        }
        var snapshots: [UUID: InteractionStreamEvent] = [:]
        for row in rows {
            snapshots[try row.decode("id")] = InteractionStreamEvent(
                seq: try row.decode("seq"), kind: .logged(.state), data: try row.decode("data"),
                terminal: try row.decode("terminal"))
        }
        return snapshots
    }
}
