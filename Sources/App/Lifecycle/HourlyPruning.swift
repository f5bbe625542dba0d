import Console
import Coordination
import Interactions
import Postgres

/// Hourly housekeeping: deletes idempotency records older than 25 hours, console sign-in links expired a day ago,
/// and attachments no message carries once the policy stops keeping them.
/// Cancelled at graceful shutdown.
struct HourlyPruning: Service {
    let pool: PostgresPool
    let attachments: AttachmentPolicy
    let logger: Logger

    func run() async {
        let writes = IdempotentWrites(pool: pool)
        let links = ConsoleLinks(pool: pool)
        let unused = UnusedAttachments(pool: pool, policy: attachments)
        let logger = logger
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(3600))
                if Task.isCancelled { return }
                do { _ = try await writes.prune() } catch {
                    logger.warning("idempotency pruning failed", ["error": "\(error)"])
                }
                do { try await links.prune() } catch {
                    logger.warning("console link pruning failed", ["error": "\(error)"])
                }
                do { _ = try await unused.prune() } catch {
                    logger.warning("attachment pruning failed", ["error": "\(error)"])
                }
            }
        }
    }
}
