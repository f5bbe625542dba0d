import Coordination
import Synchronization

/// The requests currently being answered (or streaming), by id: for the disconnect monitor, for metrics,
/// and so shutdown can wait for them or cut them short.
///
/// Every request inserts and removes itself, from libmicrohttpd threads and Swift tasks at once, so the map is
/// split into shards with a lock each: one global lock was the server's main point of contention.
final class InFlightRegistry: Sendable {
    private static let shardCount = 16
    /// Each guards its share of the live request contexts (by id modulo the shard count).
    private let shards: [Locked<[UInt64: ConnectionContext]>] = (0 ..< shardCount).map { _ in Locked([:]) }

    /// Set once someone waits for the registry to empty (shutdown): only then do `insert` and `remove` tell anyone,
    /// so serving pays one load for it.
    private let watched = Atomic<Bool>(false)
    /// Told of every insertion and removal once the registry is watched (what ``waitUntilEmpty(until:)`` waits on).
    private let changes: ChangeSignal

    init(changes: ChangeSignal) { self.changes = changes }

    private func shard(_ id: UInt64) -> Locked<[UInt64: ConnectionContext]> {
        shards[Int(id % UInt64(InFlightRegistry.shardCount))]
    }

    func insert(_ context: ConnectionContext) {
        shard(context.id).withLock { $0[context.id] = context }
        if watched.load(ordering: .sequentiallyConsistent) { changes.notify() }
    }

    func remove(_ id: UInt64) {
        let removed = shard(id).withLock { $0.removeValue(forKey: id) } != nil
        // Sequentially consistent with the store in `waitUntilEmpty`: either this sees the waiter, or the waiter's
        // count (taken after its store) sees this removal.
        if removed && watched.load(ordering: .sequentiallyConsistent) { changes.notify() }
    }

    /// Waits until no request is registered, or until `deadline` (or the calling task is cancelled); returns
    /// whether the registry is empty.
    func waitUntilEmpty(until deadline: ContinuousClock.Instant) async -> Bool {
        watched.store(true, ordering: .sequentiallyConsistent)
        while true {
            // Read before counting: a removal after the count moves it, and the wait ends at once.
            let seen = changes.generation
            if count == 0 { return true }
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            await changes.wait(after: seen, until: deadline)
        }
    }

    func context(id: UInt64) -> ConnectionContext? {
        shard(id).withLock { $0[id] }
    }

    func snapshot() -> [ConnectionContext] {
        shards.flatMap { shard in shard.withLock { Array($0.values) } }
    }

    var count: Int { shards.reduce(0) { total, shard in total + shard.withLock { $0.count } } }
}
