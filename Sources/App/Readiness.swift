import Synchronization

/// Whether the service should receive traffic: migrations applied and not shutting down.
final class Readiness: Sendable {
    private let migrated = Atomic<Bool>(false)
    private let draining = Atomic<Bool>(false)

    func markMigrated() { migrated.store(true, ordering: .releasing) }
    func markDraining() { draining.store(true, ordering: .releasing) }

    var isMigrated: Bool { migrated.load(ordering: .acquiring) }
    var isDraining: Bool { draining.load(ordering: .acquiring) }
}
