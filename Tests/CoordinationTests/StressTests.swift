import TestSupport
import Coordination
import Testing

/// Random interleavings of callers, cancellations, deadlines, failures, invalidations and shutdowns.
///
/// The interleaving is up to the scheduler, so each run differs; what must hold on every run is that every caller
/// finishes (a leaked continuation would hang it, a double resume would trap) with its own key's value or an
/// error it could legitimately get, and that no load is left counted as in flight.
@Suite(.timeLimit(.minutes(5)))
struct StressTests {
    struct Plan: Sendable {
        var key: Int
        var loadSteps: Int
        var loadSleeps: Bool
        var loadFails: Bool
        var deadline: Duration?
        var cancelAfterYields: Int?
    }

    enum Outcome: Hashable { case value, cancelled, deadline, failed, wrong }

    @Test(.timeLimit(.minutes(2)), arguments: [UInt64(1), 2, 3])
    func everyCallerFinishesWithALegitimateOutcome(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let coordinator = RequestCoordinator<Int, String>(caching: .timeToLive(.milliseconds(2), maxEntries: 2))
        let tallies: [Outcome: Tally] = [.value: Tally(), .cancelled: Tally(), .deadline: Tally(),
                                         .failed: Tally(), .wrong: Tally()]
        var callers = 0

        await withTaskGroup(of: Void.self) { group in
            for step in 0 ..< 4_000 {
                if step % 200 == 0 { await group.waitForAll() }  // waves, so shutdowns don't dominate the outcomes
                let key = Int.random(in: 0 ..< 4, using: &random)
                switch Int.random(in: 0 ..< 400, using: &random) {
                case 0 ..< 320:
                    callers += 1
                    let plan = Plan(
                        key: key,
                        loadSteps: Int.random(in: 0 ..< 5, using: &random),
                        loadSleeps: Int.random(in: 0 ..< 4, using: &random) == 0,
                        loadFails: Int.random(in: 0 ..< 10, using: &random) == 0,
                        deadline: Int.random(in: 0 ..< 5, using: &random) == 0
                            ? .microseconds(Int.random(in: 0 ..< 400, using: &random)) : nil,
                        cancelAfterYields: Int.random(in: 0 ..< 5, using: &random) == 0
                            ? Int.random(in: 0 ..< 4, using: &random) : nil)
                    group.addTask {
                        let outcome = await Self.call(coordinator, plan)
                        tallies[outcome]!.increment()
                    }
                case 320 ..< 385:
                    group.addTask { await coordinator.invalidate(key) }
                case 385 ..< 399:
                    group.addTask { await coordinator.invalidateAll() }
                default:
                    group.addTask { await coordinator.invalidateAll() }
                }
                if Int.random(in: 0 ..< 8, using: &random) == 0 { await Task.yield() }
            }
        }

        #expect(tallies.values.reduce(0) { $0 + $1.count } == callers)
        #expect(tallies[.wrong]!.count == 0)
        #expect(tallies[.value]!.count > 0)
        #expect(coordinator.statistics.loadsInFlight == 0)
    }

    static func call(_ coordinator: RequestCoordinator<Int, String>, _ plan: Plan) async -> Outcome {
        let caller = Task {
            try await coordinator.value(for: plan.key, deadline: plan.deadline) { key in
                for _ in 0 ..< plan.loadSteps { await Task.yield() }
                if plan.loadSleeps { try await Task.sleep(for: .microseconds(200)) }
                if plan.loadFails { throw TestFailure() }
                return "value of \(key)"
            }
        }
        if let yields = plan.cancelAfterYields {
            for _ in 0 ..< yields { await Task.yield() }
            caller.cancel()
        }
        switch await caller.result {
        case .success(let value): return value == "value of \(plan.key)" ? .value : .wrong
        case .failure(is CancellationError): return .cancelled
        case .failure(RequestCoordinatorError.deadlineExceeded): return .deadline
        case .failure(is TestFailure): return .failed
        case .failure: return .wrong
        }
    }
}
