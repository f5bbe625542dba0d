import Coordination

/// The requests currently being answered (or streaming), by id: for the disconnect monitor, for metrics,
/// and so shutdown can wait for them or cut them short.
///
/// Every request inserts and removes itself, from libmicrohttpd threads and Swift tasks at once, so the map is
/// split into shards with a lock each: one global lock was the server's main point of contention.
final class InFlightRegistry: Sendable {
    private static let shardCount = 16
    /// Each guards its share of the live request contexts (by id modulo the shard count).
    private let shards: [Locked<[UInt64: ConnectionContext]>] = (0 ..< shardCount).map { _ in Locked([:]) }

    private func shard(_ id: UInt64) -> Locked<[UInt64: ConnectionContext]> {
        shards[Int(id % UInt64(InFlightRegistry.shardCount))]
    }

    func insert(_ context: ConnectionContext) {
        shard(context.id).withLock { $0[context.id] = context }
    }

    func remove(_ id: UInt64) {
        _ = shard(id).withLock { $0.removeValue(forKey: id) }
    }

    func context(id: UInt64) -> ConnectionContext? {
        shard(id).withLock { $0[id] }
    }

    func snapshot() -> [ConnectionContext] {
        shards.flatMap { shard in shard.withLock { Array($0.values) } }
    }

    var count: Int { shards.reduce(0) { total, shard in total + shard.withLock { $0.count } } }
}
