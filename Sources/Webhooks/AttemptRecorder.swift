import Coordination

/// Logs finished attempts in batches: while one batch is being written, the attempts that finish meanwhile gather
/// and go together in the next statement, so a busy worker writes one statement for many attempts and an idle one
/// still writes each attempt at once (no timer, no added delay). When a batch releases queues (a message done with
/// another waiting behind it), `onRelease` is told, so the worker claims the next ones at once.
final class AttemptRecorder: Sendable {
    private struct Waiting {
        var record: WebhookOutbox.AttemptRecord
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let outbox: WebhookOutbox
    /// Most attempts in one statement.
    private let batchLimit: Int
    /// Guards the attempts waiting for the next batch and whether a batch is being written.
    private let state = Locked(State())
    /// Called after a batch that made waiting messages claimable.
    private let onRelease: @Sendable () -> Void

    /// A recorder writing through `outbox`, at most `batchLimit` attempts per statement.
    init(outbox: WebhookOutbox, batchLimit: Int = 64, onRelease: @escaping @Sendable () -> Void = {}) {
        self.outbox = outbox
        self.batchLimit = max(1, batchLimit)
        self.onRelease = onRelease
    }

    /// Returns once `record` is written (with the batch it joined), or throws the batch's error.
    func record(_ record: WebhookOutbox.AttemptRecord) async throws {
        try await withCheckedThrowingContinuation { continuation in
            let writer = state.withLock { state -> Bool in
                state.waiting.append(Waiting(record: record, continuation: continuation))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            guard writer else { return }
            // This caller writes batches until none waits; the others' continuations are resumed by it.
            Task { await writeUntilEmpty() }
        }
    }

    private func writeUntilEmpty() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                let batch = Array(state.waiting.prefix(batchLimit))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.writing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let released = try await outbox.record(batch.map(\.record))
                if released > 0 { onRelease() }
                for waiting in batch { waiting.continuation.resume() }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
