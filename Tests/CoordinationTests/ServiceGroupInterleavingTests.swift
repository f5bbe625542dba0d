@testable import Coordination
import Testing

/// `run()`, `shutdown()` and `started()` called concurrently, in seeded interleavings of the group's steps: every
/// call returns (no interleaving deadlocks), and each returns what its documentation promises.
@Suite(.timeLimit(.minutes(5)))
struct ServiceGroupInterleavingTests {
    private enum Outcome: Sendable, Equatable {
        case returned
        case threw(String)
    }

    @Test(.timeLimit(.minutes(5)))
    func everyInterleavingOfRunShutdownAndStartedEnds() async throws {
        for seed in UInt64(0) ..< 300 {
            // Two shutdowns and two waits for the start in a third of the runs: a second caller must wait for the same end.
            let doubled = seed % 3 == 0
            var names = ["run", "shutdown", "started"]
            if doubled { names += ["second shutdown", "second started"] }
            let scheduler = InterleavingScheduler(operations: names)
            let journal = Journal()
            let group = ServiceGroup(services: [FakeService(name: "a", journal: journal)], gracefulShutdownDeadline: .seconds(30),
                                     checkpoint: scheduler.checkpoint)
            let outcomes = Locked([String: Outcome]())
            let tasks = names.enumerated().map { index, name in
                Task {
                    await scheduler.perform(index) {
                        let outcome: Outcome
                        do {
                            switch name {
                            case "run": try await group.run()
                            case "shutdown", "second shutdown": await group.shutdown()
                            default: try await group.started()
                            }
                            outcome = .returned
                        } catch {
                            outcome = .threw(String(describing: error))
                        }
                        outcomes.withLock { $0[name] = outcome }
                    }
                }
            }
            // A deadlock is no step for 30 s: under ThreadSanitizer, with the whole suite running beside it, a step
            // that merely waited for a thread has taken more than 5.
            let ended = await scheduler.drive(seed: seed, stallLimit: .seconds(30))
            if !ended {
                Issue.record("seed \(seed): deadlock; steps released: \(scheduler.trace.joined(separator: ", "))")
                tasks.forEach { $0.cancel() }
                return
            }
            let seen = outcomes.withLock { $0 }
            #expect(seen["run"] == .returned, "seed \(seed)")
            #expect(seen["shutdown"] == .returned, "seed \(seed)")
            // Every waiter for the start hears the same answer: started (only once the service was prepared), or
            // stopped before it started.
            let stoppedEarly = Outcome.threw(String(describing: ServiceGroupError.stoppedBeforeStarted))
            let answers = names.filter { $0.hasSuffix("started") }.map { seen[$0] }
            #expect(Set(answers.map { "\(String(describing: $0))" }).count == 1, "seed \(seed): \(answers)")
            #expect(answers[0] == .returned || answers[0] == stoppedEarly, "seed \(seed): \(answers)")
            if answers[0] == .returned { #expect(journal.entries.contains("a prepared"), "seed \(seed)") }
        }
    }
}
