import Coordination
import Testing
import TestSupport

/// `RequestCoordinator.value(for:deadline:from:_:)`: a new load hands its key to a `BatchLoader` instead of running
/// in a task of its own, and keeps every promise of a load that does: one load per key for concurrent callers, no
/// caller after an invalidation joining the load before it, a key taken back when all its callers leave, exactly one
/// outcome per caller.
@Suite(.timeLimit(.minutes(5)))
struct BatchedLoadTests {
    /// A batch load that records each batch, holds it until the test opens the gate, and answers
    /// "<key>#<batch number>" (so a caller's value tells which batch served it).
    final class NumberedBatches: Sendable {
        let batches = Locked<[[String]]>([])
        let gate = Latch()

        func load(_ keys: [String]) async throws -> [String: String] {
            let number = batches.withLock { batches in
                batches.append(keys)
                return batches.count
            }
            try await gate.wait()
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, "\($0)#\(number)") })
        }
    }

    @Test func concurrentCallersOfOneKeyAskTheLoaderOnce() async throws {
        let recorder = NumberedBatches()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let coordinator = RequestCoordinator<String, String>(caching: .disabled)
        let busy = Task { try await loader.value(for: "busy") }  // holds the loader, so the keys below wait together
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }
        let callers = (0 ..< 30).map { index in
            Task { try await coordinator.value(for: index % 3 == 0 ? "b" : "a", from: loader) { $0 ?? "none" } }
        }
        await waitUntil { coordinator.statistics.callersJoined == 28 }
        #expect(loader.waitingKeyCount == 2)
        recorder.gate.open()
        #expect(try await busy.value == "busy#1")
        for (index, caller) in callers.enumerated() {
            #expect(try await caller.value == (index % 3 == 0 ? "b#2" : "a#2"))
        }
        #expect(recorder.batches.withLock { $0 }.map { Set($0) } == [["busy"], ["a", "b"]])
        #expect(coordinator.statistics.loadsStarted == 2)
        #expect(coordinator.statistics.loadsInFlight == 0)
    }

    @Test func whenEveryCallerLeavesTheKeyIsTakenBackFromTheLoader() async throws {
        let recorder = NumberedBatches()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let coordinator = RequestCoordinator<String, String>(caching: .untilInvalidated(maxEntries: 10))
        let busy = Task { try await loader.value(for: "busy") }
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }
        let leaving = (0 ..< 5).map { _ in Task { try await coordinator.value(for: "gone", from: loader) { $0 ?? "none" } } }
        let staying = Task { try await coordinator.value(for: "kept", from: loader) { $0 ?? "none" } }
        await waitUntil { loader.waitingKeyCount == 2 && coordinator.statistics.callersJoined == 4 }
        for caller in leaving { caller.cancel() }
        for caller in leaving { await #expect(throws: CancellationError.self) { try await caller.value } }
        await waitUntil { loader.waitingKeyCount == 1 }
        recorder.gate.open()
        #expect(try await busy.value == "busy#1")
        #expect(try await staying.value == "kept#2")
        #expect(recorder.batches.withLock { $0 } == [["busy"], ["kept"]])
        #expect(coordinator.cachedValue(for: "gone") == nil)
        #expect(coordinator.statistics.loadsInFlight == 0)
    }

    @Test func aCallerAfterInvalidateNeverJoinsTheBatchedLoadBeforeIt() async throws {
        let recorder = NumberedBatches()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let coordinator = RequestCoordinator<String, String>(caching: .untilInvalidated(maxEntries: 10))
        let before = Task { try await coordinator.value(for: "k", from: loader) { $0 ?? "none" } }
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }  // its batch runs, held
        await coordinator.invalidate("k")  // a write committed
        let after = Task { try await coordinator.value(for: "k", from: loader) { $0 ?? "none" } }
        await waitUntil { loader.waitingKeyCount == 1 }
        recorder.gate.open()
        #expect(try await before.value == "k#1")
        #expect(try await after.value == "k#2")
        // Only the load started after the invalidation may fill the cache.
        #expect(coordinator.cachedValue(for: "k") == "k#2")
        #expect(coordinator.statistics.loadsStarted == 2)
    }

    @Test func aFailedBatchFailsEveryCallerOfItsKeysAndIsNotCached() async throws {
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { _ in throw TestFailure() }
        let coordinator = RequestCoordinator<String, String>(caching: .untilInvalidated(maxEntries: 10))
        let callers = (0 ..< 4).map { _ in Task { try await coordinator.value(for: "k", from: loader) { $0 ?? "none" } } }
        for caller in callers { await #expect(throws: TestFailure.self) { try await caller.value } }
        #expect(coordinator.cachedValue(for: "k") == nil)
        #expect(coordinator.statistics.loadsInFlight == 0)
    }

    enum Outcome: Hashable { case value, cancelled, deadline, failed, wrong }

    /// Seeded: random callers (some cancelled, some with deadlines) of a few keys, invalidations and shutdowns, over a
    /// loader whose batches take random time and sometimes fail. Every caller must finish with its own key's value
    /// or an error it could legitimately get, and nothing may be left in flight or waiting in the loader.
    @Test(.timeLimit(.minutes(2)), arguments: [UInt64(4), 17, 58])
    func everyCallerFinishesWithALegitimateOutcome(seed: UInt64) async {
        var random = SplitMix64(seed: seed)
        let failEvery = Int.random(in: 5 ... 9, using: &random)
        let batchCount = Locked(0)
        let loader = BatchLoader<Int, String>(maxBatchSize: Int.random(in: 1 ... 4, using: &random),
                                              maxConcurrentBatches: Int.random(in: 1 ... 3, using: &random)) { keys in
            let number = batchCount.withLock { count in
                count += 1
                return count
            }
            if number % 3 == 0 { try await Task.sleep(for: .microseconds(number % 300)) } else { await Task.yield() }
            if number % failEvery == 0 { throw TestFailure() }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, "value of \($0)") })
        }
        let coordinator = RequestCoordinator<Int, String>(caching: .timeToLive(.milliseconds(2), maxEntries: 2))
        let tallies: [Outcome: Tally] = [.value: Tally(), .cancelled: Tally(), .deadline: Tally(),
                                         .failed: Tally(), .wrong: Tally()]
        var callers = 0
        await withTaskGroup(of: Void.self) { group in
            for step in 0 ..< 3_000 {
                if step % 200 == 0 { await group.waitForAll() }
                let key = Int.random(in: 0 ..< 5, using: &random)
                switch Int.random(in: 0 ..< 400, using: &random) {
                case 0 ..< 330:
                    callers += 1
                    let deadline: Duration? = Int.random(in: 0 ..< 6, using: &random) == 0
                        ? .microseconds(Int.random(in: 0 ..< 400, using: &random)) : nil
                    let cancelAfter: Int? = Int.random(in: 0 ..< 5, using: &random) == 0
                        ? Int.random(in: 0 ..< 4, using: &random) : nil
                    group.addTask {
                        let caller = Task {
                            try await coordinator.value(for: key, deadline: deadline, from: loader) { $0 ?? "none" }
                        }
                        if let cancelAfter {
                            for _ in 0 ..< cancelAfter { await Task.yield() }
                            caller.cancel()
                        }
                        let outcome: Outcome
                        switch await caller.result {
                        case .success(let value): outcome = value == "value of \(key)" ? .value : .wrong
                        case .failure(is CancellationError): outcome = .cancelled
                        case .failure(RequestCoordinatorError.deadlineExceeded): outcome = .deadline
                        case .failure(is TestFailure): outcome = .failed
                        case .failure: outcome = .wrong
                        }
                        tallies[outcome]!.increment()
                    }
                case 330 ..< 390:
                    group.addTask { await coordinator.invalidate(key) }
                case 390 ..< 399:
                    group.addTask { await coordinator.invalidateAll() }
                default:
                    group.addTask { await coordinator.invalidateAll() }
                }
                if Int.random(in: 0 ..< 8, using: &random) == 0 { await Task.yield() }
            }
        }
        #expect(tallies.values.reduce(0) { $0 + $1.count } == callers)
        #expect(tallies[.wrong]!.count == 0, "seed \(seed)")
        #expect(tallies[.value]!.count > 0, "seed \(seed)")
        #expect(coordinator.statistics.loadsInFlight == 0, "seed \(seed)")
        // Batches still answering loads whose callers all left finish on their own; none may keep a key waiting.
        await waitUntil { loader.waitingKeyCount == 0 }
        #expect(loader.waitingKeyCount == 0, "seed \(seed)")
    }
}
