import Coordination
import Postgres

/// Applies the migrations, retrying until the database lets it (with backoff up to 5 s), marks the service
/// migrated, then idles until shutdown. Graceful shutdown cancels an attempt still in progress.
///
/// A database that cannot be reached is logged by ``DatabaseReachabilityLog``: quietly (debug) at first, then one
/// error line that says what to do; a migration the database refuses is a warning at every attempt.
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
            var reachability = DatabaseReachabilityLog(target: pool.configuration.target, logger: logger)
            var delay = Duration.milliseconds(200)
            while !Task.isCancelled {
                let began = ContinuousClock.now
                do {
                    let applied = try await Migrator.apply(migrations, pool: pool)
                    reachability.reached()
                    if !applied.isEmpty {
                        logger.info("migrations applied", ["versions": applied.map(String.init).joined(separator: ",")])
                    }
                    readiness.markMigrated()
                    return
                } catch {
                    if Task.isCancelled { return }
                    if DatabaseReachabilityLog.isUnreachable(error) {
                        reachability.failed(error, began: began)
                    } else {
                        reachability.reached()
                        logger.warning("migrations not applied yet", ["error": String(describing: error)])
                    }
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(5))
                }
            }
        }
        over.open()
        try? await gracefulShutdown()
    }
}
