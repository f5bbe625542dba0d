import Accounts
import Coordination
import Foundation
import Postgres

/// What an event stream reads as it starts — where the interaction's log stands (with the caller's right to see it)
/// and the events a resuming client missed — batched across streams that start together: after a restart every
/// client of the replica comes back at once, and each would otherwise cost its own queries.
///
/// A batch asks exactly what the single queries asked, access rule included (same tenant; a customer only their own
/// interactions), so what each stream gets does not depend on the company it arrived in.
final class StreamStarts: Sendable {
    /// An interaction as one caller may see it.
    struct PositionKey: Hashable, Sendable {
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
    struct Position: Sendable, Equatable {
        let lastSeq: Int64
        let isOver: Bool
    }

    /// The stored events of an interaction after an id.
    struct ReplayKey: Hashable, Sendable {
        let id: UUID
        let after: Int64
    }

    private let positions: BatchLoader<PositionKey, Position>
    private let replays: BatchLoader<ReplayKey, [InteractionStreamEvent]>

    init(pool: PostgresPool, log: InteractionEventLog) {
        positions = BatchLoader { keys in try await StreamStarts.positions(of: keys, pool: pool) }
        replays = BatchLoader { keys in try await StreamStarts.replays(of: keys, log: log) }
    }

    /// Where the log of `id` stands, if `principal` may see the interaction.
    func position(of id: UUID, for principal: Principal) async throws -> Position? {
        try await positions.value(for: PositionKey(id: id, principal: principal))
    }

    /// The stored events of `id` after `after`, in order.
    func events(of id: UUID, after: Int64) async throws -> [InteractionStreamEvent] {
        try await replays.value(for: ReplayKey(id: id, after: after)) ?? []
    }

    /// Batches run and keys they held: (positions, replays).
    var statistics: (positions: BatchLoaderStatistics, replays: BatchLoaderStatistics) {
        (positions.statistics, replays.statistics)
    }

    static let positionsStatement = PreparedStatement("""
        SELECT w.n, i.last_seq, i.state <> 'started' AS over
        FROM unnest($1::uuid[], $2::uuid[], $3::text[]) WITH ORDINALITY AS w (id, tenant_id, customer_id, n)
        JOIN interactions i ON i.id = w.id AND i.tenant_id = w.tenant_id
                           AND (w.customer_id IS NULL OR i.customer_id = w.customer_id)
        """)

    /// One query for many (interaction, caller) pairs; a pair the caller may not see has no answer.
    static func positions(of keys: [PositionKey], pool: PostgresPool) async throws -> [PositionKey: Position] {
        let rows = try await pool.withConnection { connection in
            try await connection.query(positionsStatement, [PostgresArray(keys.map(\.id)), PostgresArray(keys.map(\.tenantID)),
                                                            PostgresArray(keys.map(\.customerID))])
        }
        var answers: [PositionKey: Position] = [:]
        for row in rows {
            let index = Int(try row.decode("n", as: Int64.self)) - 1
            answers[keys[index]] = Position(lastSeq: try row.decode("last_seq"), isOver: try row.decode("over"))
        }
        return answers
    }

    /// One log read for many replays: each interaction once, from the smallest id any of its streams resumes after.
    static func replays(of keys: [ReplayKey], log: InteractionEventLog) async throws -> [ReplayKey: [InteractionStreamEvent]] {
        var from: [UUID: Int64] = [:]
        for key in keys { from[key.id] = min(from[key.id] ?? key.after, key.after) }
        let events = try await log.events(in: from.map { InteractionEventLog.Range(id: $0.key, after: $0.value, through: nil) })
        var answers: [ReplayKey: [InteractionStreamEvent]] = [:]
        for key in keys {
            answers[key] = (events[key.id] ?? []).filter { ($0.seq ?? 0) > key.after }
        }
        return answers
    }
}
