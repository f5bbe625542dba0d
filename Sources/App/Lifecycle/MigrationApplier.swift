import Coordination
import Postgres

/// Applies the migrations, retrying until the database lets it (with backoff up to 5 s), marks the service
/// migrated, then idles until shutdown. Graceful shutdown cancels an attempt still in progress.
struct MigrationApplier: Service {
    let migrations: [Migration]
    let pool: PostgresPool
    let readiness: Readiness
    let logger: Logger
    /// Opens when the attempts are over: migrations applied, or given up at shutdown.
    let over = Gate()

    func run() async {
        let migrations = migrations, pool = pool, readiness = readiness, logger = logger
        try? await cancelWhenGracefulShutdown {
            var delay = Duration.milliseconds(200)
            while !Task.isCancelled {
                do {
                    let applied = try await Migrator.apply(migrations, pool: pool)
                    if !applied.isEmpty {
                        logger.info("migrations applied", ["versions": applied.map(String.init).joined(separator: ",")])
                    }
                    readiness.markMigrated()
                    return
                } catch {
                    logger.warning("migrations not applied yet", ["error": String(describing: error)])
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(5))
                }
            }
        }
        over.open()
        try? await gracefulShutdown()
    }
}
