import Coordination

/// The requests currently being answered (or streaming), by id: for the disconnect monitor, for metrics,
/// and so shutdown can wait for them or cut them short.
final class InFlightRegistry: Sendable {
    /// Guards the map of live request contexts.
    private let contexts = Locked<[UInt64: ConnectionContext]>([:])

    func insert(_ context: ConnectionContext) {
        contexts.withLock { $0[context.id] = context }
    }

    func remove(_ id: UInt64) {
        _ = contexts.withLock { $0.removeValue(forKey: id) }
    }

    func context(id: UInt64) -> ConnectionContext? {
        contexts.withLock { $0[id] }
    }

    func snapshot() -> [ConnectionContext] {
        contexts.withLock { Array($0.values) }
    }

    var count: Int { contexts.withLock { $0.count } }
}
