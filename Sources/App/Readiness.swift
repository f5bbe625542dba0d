import Coordination
import Synchronization

/// Whether the service should receive traffic: migrations applied and not shutting down.
final class Readiness: Sendable {
    private let migrated = Atomic<Bool>(false)
    private let draining = Atomic<Bool>(false)

    /// Whether this process hears other replicas' change notices (set by the application).
    let listening = Locked<(@Sendable () -> Bool)?>(nil)

    func markMigrated() { migrated.store(true, ordering: .releasing) }

    /// Whether change notices reach this process (true when there is nothing to listen with).
    var isListening: Bool { listening.withLock { $0 }?() ?? true }
    func markDraining() { draining.store(true, ordering: .releasing) }

    var isMigrated: Bool { migrated.load(ordering: .acquiring) }
    var isDraining: Bool { draining.load(ordering: .acquiring) }
}
