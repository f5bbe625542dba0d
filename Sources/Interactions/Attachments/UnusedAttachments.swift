import Postgres

/// Removes uploads no message carries once they are older than the policy keeps them, and uploads left staged by a
/// process that died mid-upload. Safe to run on every replica at once (rows are taken with `SKIP LOCKED`).
public struct UnusedAttachments: Sendable {
    let pool: PostgresPool
    let policy: AttachmentPolicy

    /// Pruning over `pool` by `policy`.
    public init(pool: PostgresPool, policy: AttachmentPolicy) {
        self.pool = pool
        self.policy = policy
    }

    /// Deletes what is due, in batches of `batch` (each its own short statement); returns how many went.
    public func prune(batch: Int = 500) async throws -> Int {
        var total = 0
        while true {
            let removed = try await pool.withConnection { [policy] connection in
                try await AttachmentStore().prune(unusedFor: policy.unusedFor, stagedFor: AttachmentPolicy.stagedFor,
                                                  batch: batch, on: connection)
            }
            total += removed
            if removed < batch { return total }
        }
    }
}
