import Coordination

/// A clock that only moves when the test says so, for the cache's expiry.
final class TestClock: Sendable {
    /// Guards the current instant.
    private let instant = Locked(ContinuousClock.now)

    func now() -> ContinuousClock.Instant { instant.withLock { $0 } }

    func advance(by duration: Duration) { instant.withLock { $0 += duration } }
}
