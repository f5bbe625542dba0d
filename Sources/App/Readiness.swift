import Synchronization

/// Whether the service should receive traffic: migrations applied and not shutting down.
final class Readiness: Sendable {
    private let migrated = Atomic<Bool>(false)
    private let draining = Atomic<Bool>(false)

    /// Whether this process hears other replicas' change notices.
    private let listening: @Sendable () -> Bool

    /// Not migrated, not draining; `listening` says whether change notices reach this process.
    init(listening: @escaping @Sendable () -> Bool) { self.listening = listening }

    func markMigrated() { migrated.store(true, ordering: .releasing) }

    /// Whether change notices reach this process (true when there is nothing to listen with).
    var isListening: Bool { listening() }
    func markDraining() { draining.store(true, ordering: .releasing) }

    var isMigrated: Bool { migrated.load(ordering: .acquiring) }
    var isDraining: Bool { draining.load(ordering: .acquiring) }
}
