import Coordination
import Testing
import TestSupport

/// `BatchLoader` turns a burst of different keys into a few calls, gives each caller its own key's value, loads a
/// key asked for by many callers once per batch, and lets no cancelled caller or failed batch touch the others.
@Suite(.timeLimit(.minutes(5)))
struct BatchLoaderTests {
    /// A load that records each batch and waits for the test's go-ahead before answering "value of <key>".
    final class RecordingLoad: Sendable {
        let batches = Locked<[[String]]>([])
        let gate = Latch()
        let failing: Set<String>

        init(failing: Set<String> = []) { self.failing = failing }

        func load(_ keys: [String]) async throws -> [String: String] {
            batches.withLock { $0.append(keys) }
            try await gate.wait()
            if keys.contains(where: failing.contains) { throw TestFailure() }
            return Dictionary(uniqueKeysWithValues: keys.filter { !$0.hasPrefix("missing") }.map { ($0, "value of \($0)") })
        }
    }

    @Test func keysArrivingWhileABatchRunsGoTogetherIntoTheNext() async throws {
        let recorder = RecordingLoad()
        let loader = BatchLoader<String, String>(maxBatchSize: 300, maxConcurrentBatches: 1) { try await recorder.load($0) }
        async let results = withTaskGroup(of: (String, String?).self) { group in
            for index in 0 ..< 1_000 {
                group.addTask { ("k\(index % 700)", try? await loader.value(for: "k\(index % 700)")) }
            }
            return await group.reduce(into: [(String, String?)]()) { $0.append($1) }
        }
        // The first batch is held; everyone else queues behind it. Wait until the keys held and waiting cover all
        // 700: on a loaded machine the group's tasks may still be arriving when the first batch runs, and late ones
        // would then rightly make batches of their own.
        await waitUntil(timeout: .seconds(120)) {
            let held = recorder.batches.withLock { $0.count == 1 ? $0[0].count : 0 }
            return held > 0 && held + loader.waitingKeyCount >= 700
        }
        recorder.gate.open()
        let all = await results
        #expect(all.count == 1_000)
        #expect(all.allSatisfy { $0.1 == "value of \($0.0)" })
        let batches = recorder.batches.withLock { $0 }
        #expect(batches.count <= 1 + 3 + 1, "\(batches.map(\.count))")  // 700 keys, 300 a batch, after the first
        #expect(batches.allSatisfy { $0.count <= 300 && Set($0).count == $0.count })
        #expect(Set(batches.flatMap { $0 }).count == 700)
        #expect(loader.statistics.batches == batches.count)
    }

    @Test func aBusyLoaderGathersKeysBeforeItsNextBatch() async throws {
        let recorder = RecordingLoad()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1, gather: .seconds(10)) { try await recorder.load($0) }
        let first = Task { try await loader.value(for: "first") }
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }
        let early = Task { try await loader.value(for: "early") }
        await waitUntil { loader.waitingKeyCount == 1 }
        recorder.gate.open()
        #expect(try await first.value == "value of first")
        // The first batch has ended with "early" waiting: the next one gathers before it runs, so these join it.
        let late = (0 ..< 3).map { index in Task { try await loader.value(for: "late\(index)") } }
        #expect(try await early.value == "value of early")
        for (index, task) in late.enumerated() { #expect(try await task.value == "value of late\(index)") }
        let batches = recorder.batches.withLock { $0 }
        #expect(batches.count == 2, "\(batches)")
        #expect(Set(batches.last ?? []) == ["early", "late0", "late1", "late2"])
    }

    @Test func aCallerFindingTheLoaderIdleNeverWaitsForTheGatheringWindow() async throws {
        let recorder = RecordingLoad()
        recorder.gate.open()
        let loader = BatchLoader<String, String>(gather: .seconds(60)) { try await recorder.load($0) }
        let start = ContinuousClock.now
        for index in 0 ..< 5 { #expect(try await loader.value(for: "k\(index)") == "value of k\(index)") }
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(recorder.batches.withLock { $0.count } == 5)
    }

    @Test func aKeyTheLoadDoesNotAnswerIsNil() async throws {
        let recorder = RecordingLoad()
        recorder.gate.open()
        let loader = BatchLoader<String, String> { try await recorder.load($0) }
        #expect(try await loader.value(for: "missing-1") == nil)
        #expect(try await loader.value(for: "present") == "value of present")
    }

    @Test func aCancelledCallerStopsWaitingAndTheOthersGetTheirValues() async throws {
        let recorder = RecordingLoad()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let first = Task { try await loader.value(for: "first") }
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }
        let doomed = Task { try await loader.value(for: "shared") }
        let survivor = Task { try await loader.value(for: "shared") }
        let other = Task { try await loader.value(for: "other") }
        await waitUntil { loader.waitingRequestCount == 3 }
        doomed.cancel()
        await #expect(throws: CancellationError.self) { try await doomed.value }
        recorder.gate.open()
        #expect(try await first.value == "value of first")
        #expect(try await survivor.value == "value of shared")
        #expect(try await other.value == "value of other")
    }

    @Test func aFailedBatchFailsOnlyItsOwnCallers() async throws {
        let recorder = RecordingLoad(failing: ["bad"])
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let bad = Task { try await loader.value(for: "bad") }
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }
        let good = Task { try await loader.value(for: "good") }
        await waitUntil { loader.waitingRequestCount == 1 }
        recorder.gate.open()
        await #expect(throws: TestFailure.self) { try await bad.value }
        #expect(try await good.value == "value of good")
    }

    @Test func aDeliveryGetsItsKeysAnswerOnceAndAWithdrawnOneNothing() async throws {
        let recorder = RecordingLoad()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let delivered = Locked<[String: [String?]]>([:])
        @Sendable func delivery(_ name: String) -> BatchLoader<String, String>.Delivery {
            { answer in delivered.withLock { $0[name, default: []].append(try? answer.get()) } }
        }
        let taken = loader.enqueue("taken", deliver: delivery("taken"))
        await waitUntil { recorder.batches.withLock { $0.count } == 1 }  // its batch runs, held
        _ = loader.enqueue("kept", deliver: delivery("kept"))
        _ = loader.enqueue("missing", deliver: delivery("missing"))
        let withdrawn = loader.enqueue("withdrawn", deliver: delivery("withdrawn"))
        let waiting = Task { try await loader.value(for: "kept") }  // a waiting caller of a delivered key
        await waitUntil { loader.waitingKeyCount == 3 }
        #expect(loader.withdraw(withdrawn, key: "withdrawn"))
        #expect(!loader.withdraw(taken, key: "taken"), "a request its batch already holds cannot be taken back")
        #expect(!loader.withdraw(withdrawn, key: "withdrawn"))
        recorder.gate.open()
        #expect(try await waiting.value == "value of kept")
        await waitUntil { delivered.withLock { $0.count } == 3 }
        // Every batch is over (the loader is idle), so a wrong second delivery would have been made by now.
        await waitUntil { loader.batchesRunning == 0 }
        #expect(delivered.withLock { $0 } == ["taken": ["value of taken"], "kept": ["value of kept"], "missing": [nil]])
        #expect(recorder.batches.withLock { $0 }.map { Set($0) } == [["taken"], ["kept", "missing"]])
    }

    @Test func aFailedBatchDeliversItsErrorToEveryRequest() async throws {
        let recorder = RecordingLoad(failing: ["bad"])
        recorder.gate.open()
        let loader = BatchLoader<String, String>(maxConcurrentBatches: 1) { try await recorder.load($0) }
        let errors = Tally()
        for _ in 0 ..< 3 {
            _ = loader.enqueue("bad") { answer in
                if case .failure(is TestFailure) = answer { errors.increment() }
            }
        }
        await errors.reached(3)
        #expect(errors.count == 3)
    }

    /// Seeded model: callers arrive at random, some are cancelled at random, some keys fail; every caller that was
    /// not cancelled ends with exactly what the load said for its key in the batch that took it.
    @Test(arguments: [UInt64(5), 23, 91])
    func everyCallerGetsItsBatchsAnswerForItsKey(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let inFailedBatches = Locked<Set<Int>>([])
        let loader = BatchLoader<Int, Int>(maxBatchSize: Int.random(in: 1 ... 40, using: &random),
                                           maxConcurrentBatches: Int.random(in: 1 ... 3, using: &random),
                                           gather: .microseconds(Int.random(in: 0 ... 1_000, using: &random))) { keys in
            // Random load times shake the schedule; every check below holds whatever they turn out to be.
            try await Task.sleep(for: .microseconds(Int.random(in: 0 ... 2_000)))
            if keys.contains(13) {
                inFailedBatches.withLock { $0.formUnion(keys) }
                throw TestFailure()
            }
            return Dictionary(uniqueKeysWithValues: keys.filter { $0 % 7 != 0 }.map { ($0, $0 * 10) })
        }
        var plans: [(key: Int, delay: Int, cancelAfter: Int?)] = []
        for _ in 0 ..< 400 {
            plans.append((Int.random(in: 1 ... 120, using: &random), Int.random(in: 0 ... 3_000, using: &random),
                          Bool.random(using: &random) && Bool.random(using: &random) ? Int.random(in: 0 ... 2_000, using: &random) : nil))
        }
        let outcomes = await withTaskGroup(of: (Int, Result<Int?, any Error>, Bool).self) { group in
            for plan in plans {
                group.addTask {
                    try? await Task.sleep(for: .microseconds(plan.delay))
                    let task = Task { try await loader.value(for: plan.key) }
                    if let cancelAfter = plan.cancelAfter {
                        try? await Task.sleep(for: .microseconds(cancelAfter))
                        task.cancel()
                    }
                    return (plan.key, await task.result, plan.cancelAfter != nil)
                }
            }
            return await group.reduce(into: [(Int, Result<Int?, any Error>, Bool)]()) { $0.append($1) }
        }
        #expect(outcomes.count == plans.count)
        for (key, result, cancelled) in outcomes {
            switch result {
            case .success(let value):
                #expect(value == (key % 7 == 0 ? nil : key * 10), "seed \(seed): key \(key)")
            case .failure(is TestFailure):
                // Only a batch holding 13 fails, and it fails every key it held.
                #expect(inFailedBatches.withLock { $0.contains(key) }, "seed \(seed): key \(key) failed outside a failed batch")
            case .failure(is CancellationError):
                #expect(cancelled, "seed \(seed): key \(key) was never cancelled")
            case .failure(let error):
                Issue.record("seed \(seed): key \(key): \(error)")
            }
        }
    }
}
