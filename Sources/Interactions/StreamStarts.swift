import Accounts
import Coordination
import Foundation
import Postgres

/// What an event stream reads as it starts — where the interaction's log stands (with the caller's right to see it),
/// the events a resuming client missed, or the state snapshot a new one begins with — batched across streams that
/// start together: after a restart every client of the replica comes back at once, and each would otherwise cost its
/// own queries. A caller never shares a read that began before it asked (`BatchLoader` starts a new batch for
/// keys asked for while one runs), so a snapshot is never older than the subscription taken before it.
///
/// Positions go through the store's one statement for one pair or many (`InteractionStore.logPositions`, with its access
/// rule: same tenant, a customer only their own interactions); a replay is what the single log read gives. So what
/// each stream gets does not depend on the company it arrived in.
final class StreamStarts: Sendable {
    /// The stored events of an interaction after an id.
    struct ReplayKey: Hashable, Sendable {
        let id: UUID
        let after: Int64
    }

    private let positions: BatchLoader<InteractionStore.LogPositionKey, InteractionStore.LogPosition>
    private let replays: BatchLoader<ReplayKey, [InteractionStreamEvent]>
    private let snapshots: BatchLoader<UUID, InteractionStreamEvent>

    /// How long a batch waits for company when streams are starting faster than one batch at a time can serve: a
    /// reconnect storm then costs a few hundred queries instead of one per few streams, for a few milliseconds each.
    static let gather = Duration.milliseconds(5)

    init(pool: PostgresPool, log: InteractionEventLog) {
        positions = BatchLoader(gather: StreamStarts.gather) { keys in
            try await pool.withConnection { connection in try await InteractionStore().logPositions(of: keys, on: connection) }
        }
        replays = BatchLoader(gather: StreamStarts.gather) { keys in try await StreamStarts.replays(of: keys, log: log) }
        snapshots = BatchLoader(gather: StreamStarts.gather) { ids in try await log.snapshots(of: ids) }
    }

    /// The current state of `id` as one `state` event; nil when there is no such interaction.
    func snapshot(of id: UUID) async throws -> InteractionStreamEvent? {
        try await snapshots.value(for: id)
    }

    /// Where the log of `id` stands, if `principal` may see the interaction.
    func position(of id: UUID, for principal: Principal) async throws -> InteractionStore.LogPosition? {
        try await positions.value(for: InteractionStore.LogPositionKey(id: id, principal: principal))
    }

    /// The stored events of `id` after `after`, in order.
    func events(of id: UUID, after: Int64) async throws -> [InteractionStreamEvent] {
        try await replays.value(for: ReplayKey(id: id, after: after)) ?? []
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
