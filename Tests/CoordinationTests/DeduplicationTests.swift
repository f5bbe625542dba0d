import Coordination
import Testing
import TestSupport

/// Concurrent callers of one key share one load; different keys do not wait for each other.
@Suite(.timeLimit(.minutes(5)))
struct DeduplicationTests {
    @Test func thousandConcurrentCallersOfOneKeyShareOneLoad() async {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        async let values = withTaskGroup(of: String.self) { group in
            for _ in 0 ..< 1_000 {
                group.addTask { (try? await coordinator.value(for: "feed", load: held.load)) ?? "failed" }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        await waitUntil { coordinator.statistics.callersJoined == 999 }
        held.release()

        let all = await values
        #expect(all.count == 1_000)
        #expect(all.allSatisfy { $0 == "value of feed" })
        #expect(held.started.count == 1)
        #expect(coordinator.statistics == RequestCoordinatorStatistics(
            loadsStarted: 1, callersJoined: 999, cacheHits: 0, loadsInFlight: 0, cachedEntries: 1))
    }

    @Test func differentKeysLoadInParallel() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        let first = Task { try await coordinator.value(for: "a", load: held.load) }
        let second = Task { try await coordinator.value(for: "b", load: held.load) }
        // Both loads are running before either is released: neither waits for the other.
        await held.started.reached(2)
        #expect(coordinator.statistics.loadsInFlight == 2)

        held.release()
        #expect(try await first.value == "value of a")
        #expect(try await second.value == "value of b")
        #expect(coordinator.statistics.loadsInFlight == 0)
        #expect(coordinator.statistics.callersJoined == 0)
    }

    @Test func withCachingDisabledLoadsAreSharedButNotKept() async throws {
        let coordinator = RequestCoordinator<String, String>(caching: .disabled)
        let held = HeldLoad()
        let first = Task { try await coordinator.value(for: "feed", load: held.load) }
        let second = Task { try await coordinator.value(for: "feed", load: held.load) }
        await waitUntil { coordinator.statistics.callersJoined == 1 }
        held.release()
        #expect(try await first.value == "value of feed")
        #expect(try await second.value == "value of feed")

        #expect(coordinator.cachedValue(for: "feed") == nil)
        #expect(try await coordinator.value(for: "feed", load: held.load) == "value of feed")
        #expect(coordinator.statistics == RequestCoordinatorStatistics(
            loadsStarted: 2, callersJoined: 1, cacheHits: 0, loadsInFlight: 0, cachedEntries: 0))
    }
}
