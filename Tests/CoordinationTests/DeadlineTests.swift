import Coordination
import Testing

/// A caller's deadline fails that caller alone; the load goes on for the others.
@Suite(.timeLimit(.minutes(5)))
struct DeadlineTests {
    @Test func aPassedDeadlineFailsOnlyItsCaller() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        let patient = Task { try await coordinator.value(for: "feed", load: held.load) }
        await held.started.reached(1)

        let start = ContinuousClock.now
        let hurried = Task { try await coordinator.value(for: "feed", deadline: .milliseconds(50), load: held.load) }
        await #expect(throws: RequestCoordinatorError.deadlineExceeded(.milliseconds(50))) { try await hurried.value }
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        #expect(held.cancelled.count == 0)
        #expect(coordinator.statistics.loadsInFlight == 1)

        held.release()
        #expect(try await patient.value == "value of feed")
        #expect(held.started.count == 1)
    }

    @Test func theLastCallersDeadlineCancelsTheLoad() async {
        let coordinator = RequestCoordinator<String, String>()
        let held = HeldLoad()
        let hurried = Task { try await coordinator.value(for: "feed", deadline: .milliseconds(20), load: held.load) }
        await #expect(throws: RequestCoordinatorError.deadlineExceeded(.milliseconds(20))) { try await hurried.value }
        await held.cancelled.reached(1)
        #expect(coordinator.statistics.loadsInFlight == 0)
    }

    @Test func aLoadFinishingInTimeAnswersNormally() async throws {
        let coordinator = RequestCoordinator<String, String>()
        let value = try await coordinator.value(for: "feed", deadline: .seconds(30), load: { _ in "quick" })
        #expect(value == "quick")
    }
}
