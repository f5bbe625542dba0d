@testable import Coordination
import TestSupport
import Testing

/// A controllable scheduler for a few concurrent operations on one object: each operation parks at the object's
/// checkpoints, and the scheduler releases one parked operation at a time, chosen by a seeded generator. Operations
/// that block on something else (a gate, a stream) are simply not parked; the scheduler waits for the next one to
/// park or finish. When nothing parks or finishes for `stallLimit`, the operations are deadlocked.
final class InterleavingScheduler: Sendable {
    /// Which operation the current task runs (set by ``perform(_:_:)``); checkpoints outside one pass through.
    @TaskLocal static var operation: Int?

    private struct State {
        var parked: [Int: (label: String, continuation: CheckedContinuation<Void, Never>)] = [:]
        var finished: Set<Int> = []
        var trace: [String] = []
    }

    /// Guards the parked operations, the finished ones and the trace of what was released.
    private let state = Locked(State())
    private let names: [String]

    init(operations names: [String]) { self.names = names }

    /// The object's checkpoint hook: parks the calling operation until the scheduler releases it.
    @Sendable func checkpoint(_ label: String) async {
        guard let operation = Self.operation else { return }
        await withCheckedContinuation { continuation in
            state.withLock { $0.parked[operation] = (label, continuation) }
        }
    }

    /// Runs `body` as operation `index`, and records when it has returned.
    func perform(_ index: Int, _ body: @Sendable () async -> Void) async {
        await Self.$operation.withValue(index) { await body() }
        state.withLock { _ = $0.finished.insert(index) }
    }

    /// Which operation was released past which checkpoint, in order (for failure messages).
    var trace: [String] { state.withLock { $0.trace } }

    /// Releases parked operations one at a time in an order drawn from `seed` until all have finished; returns
    /// false when they stall (nothing parks or finishes for `stallLimit`), which is a deadlock.
    func drive(seed: UInt64, stallLimit: Duration = .seconds(5)) async -> Bool {
        var random = SplitMix64(seed: seed)
        var lastProgress = ContinuousClock.now
        while true {
            let (parked, done) = state.withLock { state in (state.parked.keys.sorted(), state.finished.count == names.count) }
            if done { return true }
            if let chosen = parked.isEmpty ? nil : parked[Int(random.next() % UInt64(parked.count))] {
                let released = state.withLock { state in
                    let parked = state.parked.removeValue(forKey: chosen)
                    if let parked { state.trace.append("\(names[chosen]) past '\(parked.label)'") }
                    return parked?.continuation
                }
                released?.resume()
                lastProgress = ContinuousClock.now
                continue
            }
            if ContinuousClock.now - lastProgress > stallLimit { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
