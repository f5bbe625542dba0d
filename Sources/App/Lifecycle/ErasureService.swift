import Coordination
import Foundation
import Interactions
import Postgres

/// Carries out erasures on every replica: once a second it looks for a due one (steps skip what another replica
/// holds, so none is done twice), and runs its steps with a pause of their own length between them, so that writes
/// keep their latency while a large erasure runs.
struct ErasureService: Service {
    let erasure: UserErasure
    let completed: Locked<Int>
    let logger: Logger
    /// Returns once the schema is migrated.
    let ready: @Sendable () async -> Void

    func run() async {
        let erasure = erasure, completed = completed, logger = logger, ready = ready
        try? await cancelWhenGracefulShutdown {
            await ready()
            while !Task.isCancelled {
                do {
                    let done = try await erasure.runDue(yielding: 1)
                    if !done.isEmpty {
                        completed.withLock { $0 += done.count }
                        logger.info("erasures completed", ["erasures": done.map(\.uuidString).joined(separator: ",")])
                    }
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("erasure step failed; retrying", ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
