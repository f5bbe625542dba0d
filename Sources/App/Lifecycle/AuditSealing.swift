import Accounts
import Coordination
import Postgres

/// Seals new audit entries into their tenants' chains every second (one replica at a time; see `AuditSealer`).
/// Without `AUDIT_SEAL_KEY` entries are kept unsealed, and the start-up log says so.
struct AuditSealing: Service {
    let pool: PostgresPool
    let key: [UInt8]?
    let logger: Logger
    /// Returns once the schema is migrated.
    let ready: @Sendable () async -> Void
    var interval = Duration.seconds(1)

    func run() async {
        guard let key else {
            logger.warning("AUDIT_SEAL_KEY is unset: audit entries are recorded but not sealed, so tampering with them "
                           + "cannot be detected; set it to 64 hexadecimal digits (the same on every replica)")
            try? await gracefulShutdown()
            return
        }
        let sealer = AuditSealer(pool: pool, key: key)
        let logger = logger, interval = interval, ready = ready
        try? await cancelWhenGracefulShutdown {
            await ready()
            while !Task.isCancelled {
                do { try await sealer.sealAll() } catch {
                    logger.warning("audit sealing failed", ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
