import Coordination
import Testing

/// What fake services did, in order; a test can wait for an entry to appear (no sleeping to order events).
final class Journal: Sendable {
    private struct State {
        var entries: [String] = []
        var gates: [String: Gate] = [:]
    }

    /// Guards the entries and the gates of the entries someone waits for (or that were written).
    private let state = Locked(State())

    func record(_ entry: String) {
        let gate = state.withLock { state -> Gate in
            state.entries.append(entry)
            let gate = state.gates[entry] ?? Gate()
            state.gates[entry] = gate
            return gate
        }
        gate.open()
    }

    var entries: [String] { state.withLock { $0.entries } }

    /// Waits until `entry` is recorded; records an issue after `timeout` rather than hanging.
    func wait(for entry: String, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async {
        let gate = state.withLock { state -> Gate in
            if let gate = state.gates[entry] { return gate }
            let gate = Gate()
            state.gates[entry] = gate
            return gate
        }
        if await !gate.wait(until: .now + timeout) {
            Issue.record("\(entry) not recorded within \(timeout); journal: \(entries)", sourceLocation: sourceLocation)
        }
    }

    /// Whether `first` was recorded before `second` (both recorded).
    func order(_ first: String, before second: String) -> Bool {
        let entries = self.entries
        guard let a = entries.firstIndex(of: first), let b = entries.firstIndex(of: second) else { return false }
        return a < b
    }
}

/// Waits for `task` at most `timeout`; records an issue and cancels it rather than hanging.
func value<Success: Sendable>(of task: Task<Success, any Error>, within timeout: Duration = .seconds(10),
                              sourceLocation: SourceLocation = #_sourceLocation) async throws -> Success {
    let done = Gate()
    let watcher = Task {
        _ = await done.wait(until: .now + timeout)
        if !done.isOpen {
            Issue.record("task did not finish within \(timeout)", sourceLocation: sourceLocation)
            task.cancel()
        }
    }
    defer { watcher.cancel() }
    let result = await task.result
    done.open()
    return try result.get()
}
