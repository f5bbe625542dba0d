@testable import Coordination
import Testing

/// What the cache keeps, for how long, and what the synchronous probe sees.
@Suite(.timeLimit(.minutes(5)))
struct CachingTests {
    let clock = TestClock()

    func coordinator(
        _ caching: CachePolicy, lifetime: (@Sendable (String) -> Duration?)? = nil
    ) -> RequestCoordinator<String, String> {
        RequestCoordinator(caching: caching, lifetime: lifetime, now: clock.now)
    }

    @Test func aCacheHitCostsNoLoad() async throws {
        let coordinator = coordinator(.untilInvalidated(maxEntries: 10))
        #expect(try await coordinator.value(for: "feed", load: { _ in "first" }) == "first")
        #expect(try await coordinator.value(for: "feed", load: { _ in "second" }) == "first")
        #expect(coordinator.statistics == RequestCoordinatorStatistics(
            loadsStarted: 1, callersJoined: 0, cacheHits: 1, loadsInFlight: 0, cachedEntries: 1))
    }

    @Test func theProbeHitsThenMissesAfterInvalidate() async throws {
        let coordinator = coordinator(.untilInvalidated(maxEntries: 10))
        #expect(coordinator.cachedValue(for: "feed") == nil)
        _ = try await coordinator.value(for: "feed", load: { _ in "value" })
        #expect(coordinator.cachedValue(for: "feed") == "value")
        #expect(coordinator.statistics.cacheHits == 1)

        await coordinator.invalidate("feed")
        #expect(coordinator.cachedValue(for: "feed") == nil)
        #expect(coordinator.statistics.cacheHits == 1)
        #expect(coordinator.statistics.cachedEntries == 0)
    }

    @Test func aValueExpiresAfterTheTimeToLive() async throws {
        let coordinator = coordinator(.timeToLive(.seconds(10), maxEntries: 10))
        _ = try await coordinator.value(for: "feed", load: { _ in "old" })
        clock.advance(by: .seconds(9))
        #expect(coordinator.cachedValue(for: "feed") == "old")
        clock.advance(by: .seconds(1))
        #expect(coordinator.cachedValue(for: "feed") == nil)
        #expect(coordinator.statistics.cachedEntries == 0)

        #expect(try await coordinator.value(for: "feed", load: { _ in "new" }) == "new")
        #expect(coordinator.statistics.loadsStarted == 2)
    }

    @Test func theShorterOfPolicyAndValueLifetimeWins() async throws {
        let coordinator = coordinator(.timeToLive(.seconds(10), maxEntries: 10)) { token in
            switch token {
            case "expires soon": .seconds(2)
            case "expired": .zero
            default: .seconds(60)
            }
        }
        _ = try await coordinator.value(for: "a", load: { _ in "expires soon" })
        _ = try await coordinator.value(for: "b", load: { _ in "long lived" })
        _ = try await coordinator.value(for: "c", load: { _ in "expired" })
        #expect(coordinator.cachedValue(for: "c") == nil)

        clock.advance(by: .seconds(2))
        #expect(coordinator.cachedValue(for: "a") == nil)
        #expect(coordinator.cachedValue(for: "b") == "long lived")
        clock.advance(by: .seconds(8))
        #expect(coordinator.cachedValue(for: "b") == nil)
    }

    @Test func aValueLifetimeAppliesWithoutAPolicyTimeToLive() async throws {
        let coordinator = coordinator(.untilInvalidated(maxEntries: 10)) { _ in .seconds(5) }
        _ = try await coordinator.value(for: "token", load: { _ in "user 7" })
        clock.advance(by: .seconds(4))
        #expect(coordinator.cachedValue(for: "token") == "user 7")
        clock.advance(by: .seconds(1))
        #expect(coordinator.cachedValue(for: "token") == nil)
    }

    @Test func aFullCacheEvictsTheLeastRecentlyUsedEntry() async throws {
        let coordinator = coordinator(.untilInvalidated(maxEntries: 2))
        _ = try await coordinator.value(for: "a", load: { $0 })
        _ = try await coordinator.value(for: "b", load: { $0 })
        #expect(coordinator.cachedValue(for: "a") == "a")  // now "b" is the least recently used
        _ = try await coordinator.value(for: "c", load: { $0 })

        #expect(coordinator.statistics.cachedEntries == 2)
        #expect(coordinator.cachedValue(for: "b") == nil)
        #expect(coordinator.cachedValue(for: "a") == "a")
        #expect(coordinator.cachedValue(for: "c") == "c")
    }
}
