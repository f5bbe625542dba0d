import Accounts
import Console
import Coordination
import Interactions
import Postgres

/// Hourly housekeeping: deletes idempotency records older than 25 hours, console sign-in links expired a day ago,
/// attachments no message carries once the policy stops keeping them, and audit entries past their retention
/// (`AUDIT_RETENTION_DAYS`, whether or not the chain is sealed).
/// Cancelled at graceful shutdown.
struct HourlyPruning: Service {
    let pool: PostgresPool
    let attachments: AttachmentPolicy
    let auditRetentionDays: Int
    let logger: Logger

    func run() async {
        let writes = IdempotentWrites(pool: pool)
        let links = ConsoleLinks(pool: pool)
        let unused = UnusedAttachments(pool: pool, policy: attachments)
        let audit = AuditRetention(pool: pool, days: auditRetentionDays)
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
                do { _ = try await audit.prune() } catch {
                    logger.warning("audit retention failed", ["error": "\(error)"])
                }
            }
        }
    }
}
