import Coordination
import Testing
import TestSupport

/// After `invalidate`, nobody joins or caches a load that began before it; late loads never clobber newer ones.
@Suite(.timeLimit(.minutes(5)))
struct FreshnessTests {
    @Test func aLateFinisherNeverOverwritesTheNewerCachedValue() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let old = HeldLoad { _ in "A" }
        let new = HeldLoad { _ in "B" }
        let early = Task { try await coordinator.value(for: "feed", load: old.load) }
        await old.started.reached(1)
        await coordinator.invalidate("feed")
        let late = Task { try await coordinator.value(for: "feed", load: new.load) }
        await new.started.reached(1)

        new.release()
        #expect(try await late.value == "B")
        #expect(coordinator.cachedValue(for: "feed") == "B")

        old.release()
        #expect(try await early.value == "A")
        #expect(coordinator.cachedValue(for: "feed") == "B")
        #expect(try await coordinator.value(for: "feed", load: { _ in "C" }) == "B")
        #expect(coordinator.statistics.loadsStarted == 2)
    }

    @Test func aLateFinisherNeverRetiresTheNewerLoad() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let old = HeldLoad { _ in "A" }
        let new = HeldLoad { _ in "B" }
        let early = Task { try await coordinator.value(for: "feed", load: old.load) }
        await old.started.reached(1)
        await coordinator.invalidate("feed")
        let late = Task { try await coordinator.value(for: "feed", load: new.load) }
        await new.started.reached(1)

        old.release()
        #expect(try await early.value == "A")
        #expect(coordinator.cachedValue(for: "feed") == nil)

        // B is still the key's current load: a newcomer joins it rather than starting a third.
        let newcomer = Task { try await coordinator.value(for: "feed", load: { _ in "C" }) }
        await waitUntil { coordinator.statistics.callersJoined == 1 }
        new.release()
        #expect(try await late.value == "B")
        #expect(try await newcomer.value == "B")
        #expect(coordinator.cachedValue(for: "feed") == "B")
        #expect(coordinator.statistics.loadsStarted == 2)
    }

    @Test func aCallerAfterInvalidateStartsANewLoadInsteadOfJoining() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let old = HeldLoad { _ in "before the write" }
        let new = HeldLoad { _ in "after the write" }
        let early = Task { try await coordinator.value(for: "feed", load: old.load) }
        await old.started.reached(1)
        await coordinator.invalidate("feed")
        let late = Task { try await coordinator.value(for: "feed", load: new.load) }
        await new.started.reached(1)
        #expect(coordinator.statistics.loadsStarted == 2)
        #expect(coordinator.statistics.callersJoined == 0)
        #expect(coordinator.statistics.loadsInFlight == 2)

        old.release()
        new.release()
        #expect(try await early.value == "before the write")
        #expect(try await late.value == "after the write")
        #expect(coordinator.cachedValue(for: "feed") == "after the write")
    }

    @Test func invalidateAllRetiresEveryKey() async throws {
        let coordinator = RequestCoordinator<String, String>()
        #expect(try await coordinator.value(for: "cached", load: { _ in "old" }) == "old")
        let held = HeldLoad { _ in "stale" }
        let inFlight = Task { try await coordinator.value(for: "loading", load: held.load) }
        await held.started.reached(1)

        await coordinator.invalidateAll()
        #expect(coordinator.cachedValue(for: "cached") == nil)
        held.release()
        #expect(try await inFlight.value == "stale")
        #expect(coordinator.cachedValue(for: "loading") == nil)
        #expect(coordinator.statistics.cachedEntries == 0)
    }

    @Test func anErrorReachesEveryWaiterAndIsNotCached() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let failing = HeldLoad { _ in throw TestFailure() }
        let callers = (0 ..< 3).map { _ in Task { try await coordinator.value(for: "feed", load: failing.load) } }
        await waitUntil { coordinator.statistics.callersJoined == 2 }
        failing.release()
        for caller in callers { await #expect(throws: TestFailure.self) { try await caller.value } }
        #expect(coordinator.cachedValue(for: "feed") == nil)

        #expect(try await coordinator.value(for: "feed", load: { _ in "recovered" }) == "recovered")
        #expect(coordinator.statistics.loadsStarted == 2)
        #expect(coordinator.statistics.loadsInFlight == 0)
    }
}
