import Coordination
import Testing
import TestSupport

/// Each caller can leave alone; a load is cancelled only when nobody waits for it any more.
@Suite(.timeLimit(.minutes(5)))
struct CancellationTests {
    @Test func cancellingOneWaiterLeavesTheOthersAndTheLoad() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        let callers = (0 ..< 3).map { _ in Task { try await coordinator.value(for: "feed", load: held.load) } }
        await waitUntil { coordinator.statistics.callersJoined == 2 }

        callers[1].cancel()
        await #expect(throws: CancellationError.self) { try await callers[1].value }
        #expect(coordinator.statistics.loadsInFlight == 1)

        held.release()
        #expect(try await callers[0].value == "value of feed")
        #expect(try await callers[2].value == "value of feed")
        #expect(held.cancelled.count == 0)
        #expect(held.started.count == 1)
        #expect(coordinator.cachedValue(for: "feed") == "value of feed")
    }

    @Test func cancellingEveryWaiterCancelsTheLoad() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        let callers = (0 ..< 2).map { _ in Task { try await coordinator.value(for: "feed", load: held.load) } }
        await waitUntil { coordinator.statistics.callersJoined == 1 }

        for caller in callers { caller.cancel() }
        for caller in callers { await #expect(throws: CancellationError.self) { try await caller.value } }
        await held.cancelled.reached(1)
        #expect(coordinator.statistics.loadsInFlight == 0)

        // The abandoned load is no longer joinable: the next caller starts its own.
        let fresh = HeldLoad()
        fresh.release()
        #expect(try await coordinator.value(for: "feed", load: fresh.load) == "value of feed")
        #expect(coordinator.statistics.loadsStarted == 2)
    }

    @Test func aCallerCancelledBeforeAskingStartsNoLoad() async {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await coordinator.value(for: "feed", load: held.load)
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(coordinator.statistics.loadsStarted == 0)
        #expect(held.started.count == 0)
    }
}
