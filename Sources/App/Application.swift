import Accounts
import Feeds
import Foundation
import Interactions
import HTTPServer
import Postgres
import Coordination
import Webhooks

/// The whole service wired together: pools, routes, and one ``ServiceGroup`` of what runs — the pools' closing,
/// the listener and its followers, migrations, hourly pruning, the HTTP servers, the event-stream timers, the
/// readiness mark — started in that order and shut down in the reverse one. The group also owns the signals that
/// stop the process: ``run()`` is the whole life of the service, in the caller's task.
public final class Application: Sendable {
    /// The validated configuration.
    public let configuration: Configuration
    /// The service's logger.
    public let logger: Logger
    /// The Postgres connection pool.
    public let pool: PostgresPool
    /// The webhook worker's own connections: its bookkeeping commits asynchronously (see `init`).
    private let deliveryPool: PostgresPool
    let readiness: Readiness
    let services: Services
    private let server: HTTPServer
    private let streamServer: HTTPServer?
    /// Runs the service's parts; built in `init`, run by `run()`.
    private let group: ServiceGroup
    private let migrationApplier: MigrationApplier

    /// Wires the service; nothing runs until `run()`. With `signals`, catching them starts now (they no longer
    /// stop the process), and the first one shuts the service down.
    ///
    /// `logWriter` is the writer behind `logger`, when it has one (its dropped lines are counted in the metrics).
    public init(configuration: Configuration, logger: Logger, logWriter: LogWriter? = nil,
                migrations: [Migration] = Migrations.all, shutdownSignals signals: [Int32] = []) {
        self.configuration = configuration
        self.logger = logger
        let metrics = Metrics()
        // One thread waits for every database socket of this service and runs their timers; stopped last.
        let reactor = SocketReactor(name: "postgres-reactor")
        self.pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: configuration.databaseURL,
                                                 queryObserver: { metrics.recordQuery($0, succeeded: $1) },
                                                 statementDeadline: configuration.statementDeadline,
                                                 applicationName: "switchboard", reactor: reactor),
            maxConnections: configuration.poolSize, acquireTimeout: configuration.poolTimeout)
        // The delivery worker's claims and attempt records commit without waiting for the WAL flush
        // (`synchronous_commit=off`): losing the last of them in a database crash only repeats a delivery, which
        // at-least-once allows (the same webhook-id), while their flushes no longer queue with the API's writes.
        // The outbox rows themselves are written by the API's transactions, which stay synchronous.
        self.deliveryPool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: configuration.databaseURL,
                                                 queryObserver: { metrics.recordQuery($0, succeeded: $1) },
                                                 statementDeadline: configuration.statementDeadline,
                                                 applicationName: "switchboard-webhooks",
                                                 sessionSettings: ["synchronous_commit": "off"], reactor: reactor),
            maxConnections: min(4, configuration.webhooks.concurrency), acquireTimeout: configuration.poolTimeout)
        // The listener marks changed feeds stale the moment it reads a notice (before any task is scheduled), so a
        // read here right after another replica acknowledged its write does not get the old page.
        let feeds = FeedService(store: FeedStore(pool: pool), caching: configuration.feedCache,
                                executor: configuration.tasksOnReactor ? reactor : nil)
        let listener = try? PostgresListener(
            configuration: PostgresConfiguration(connectionString: configuration.databaseURL,
                                                 statementDeadline: min(configuration.statementDeadline, .seconds(10)),
                                                 applicationName: Application.listenerName, reactor: reactor),
            channels: [FeedStore.channel, InteractionStore.channel, AccountStore.revocationChannel, WebhookStore.channel],
            livenessInterval: configuration.listenerLiveness,
            inline: { event in
                if case .listening(afterGap: true) = event {
                    logger.warning("change-notice listener reconnected; dropping feed caches")
                }
                feeds.receive(event)
            })
        let readiness = Readiness(listening: { listener?.isConnected ?? false })
        self.readiness = readiness
        let migrationApplier = MigrationApplier(migrations: migrations, pool: pool, readiness: readiness, logger: logger)
        self.migrationApplier = migrationApplier
        let services = Services(configuration: configuration, pool: pool, deliveryPool: deliveryPool, feeds: feeds, logger: logger,
                                notices: { listener?.notifications(on: [WebhookStore.channel]) },
                                migrated: { await migrationApplier.over.wait() })
        self.services = services
        let servers = Locked<[HTTPServer]>([])
        let router = Routes.router(configuration: configuration, logger: logger, pool: pool, readiness: readiness,
                                   services: services, metrics: metrics, logDropped: { logWriter?.droppedLines ?? 0 },
                                   servers: { servers.withLock { $0 } })
        self.routes = router.routes
        let responder = router.buildResponder()
        // libmicrohttpd's own complaints (malformed requests, failed sends) join the JSON log, rate-limited.
        let libraryLog: @Sendable (String) -> Void = { line in logger.warning("libmicrohttpd", ["message": line]) }
        var serverConfiguration = configuration.server
        serverConfiguration.errorLog = libraryLog
        if configuration.tasksOnReactor { serverConfiguration.taskExecutor = reactor }
        let streamServer = configuration.streamServer.map {
            var streamConfiguration = $0
            streamConfiguration.errorLog = libraryLog
            return HTTPServer(configuration: streamConfiguration, responder: responder.respond(to:),
                              fromMemory: responder.answerFromMemory(_:))
        }
        self.streamServer = streamServer
        let handoff = configuration.streamHandoff
            ? streamServer.map { ConnectionHandoff(to: $0, paths: Routes.eventStreamPaths) } : nil
        self.server = HTTPServer(configuration: serverConfiguration, responder: responder.respond(to:),
                                 fromMemory: responder.answerFromMemory(_:), streamsBody: responder.streamsBody(_:),
                                 handoff: handoff)
        var parts: [any Service] = [DatabaseClosing(pools: [pool, deliveryPool], reactor: reactor)]
        if let listener {
            parts.append(NoticeFollower(listener: listener, services: services, logger: logger,
                                        executor: configuration.tasksOnReactor ? reactor : nil))
        }
        parts.append(migrationApplier)
        parts.append(HourlyPruning(pool: pool, attachments: configuration.attachments,
                                   auditRetentionDays: configuration.auditRetentionDays, logger: logger))
        parts.append(RetentionService(retention: ConversationRetention(pool: pool, floorDays: configuration.retentionFloorDays),
                                      statistics: services.retention, logger: logger,
                                      ready: { await migrationApplier.over.wait() }, interval: configuration.retentionInterval))
        parts.append(ErasureService(erasure: UserErasure(pool: pool, grace: configuration.erasureGrace),
                                    completed: services.erasuresCompleted, logger: logger,
                                    ready: { await migrationApplier.over.wait() }))
        parts.append(AuditSealing(pool: pool, key: configuration.auditSealKey, logger: logger,
                                  ready: { await migrationApplier.over.wait() }))
        // The stream server first: the main server hands it connections from its first one (it stops last).
        if let streamServer {
            let handedOff = handoff != nil
            parts.append(HTTPServerService(streamServer, name: "event-stream server", shutdownDeadline: configuration.shutdownDeadline) { port in
                var fields: [String: any Sendable] = ["handoff_from_port": handedOff]
                if port != 0 { fields["port"] = port }
                logger.info("event streams have a daemon of their own", fields)
            })
        }
        parts.append(HTTPServerService(server, shutdownDeadline: configuration.shutdownDeadline))
        parts.append(services.interactionEvents)
        parts.append(services.inbox)
        parts.append(services.presence)
        parts.append(services.webhooks)
        parts.append(DrainingMark(readiness: readiness))
        // A backstop only: each server bounds its own drain by the shutdown deadline (they drain one after the other).
        var trigger: (@Sendable () async -> Void)?
        if !signals.isEmpty {
            let trap = SignalTrap(catching: signals)
            trigger = {
                guard let signal = await trap.first() else { return }
                logger.info("shutting down", ["signal": Int(signal)])
            }
        }
        group = ServiceGroup(services: parts, gracefulShutdownDeadline: configuration.shutdownDeadline * 2 + .seconds(10),
                             shutdownTrigger: trigger)
        servers.withLock { $0 = [server] + (streamServer.map { [$0] } ?? []) }
    }

    /// Runs every service, in order, until ``shutdown()`` or one of the signals given to `init`, then stops them
    /// in reverse order; the pools close last. Throws why, when a service stops on its own or cannot start (a
    /// port in use: then the server's own error), after stopping what had started. Runs once: a second call throws
    /// ``ServiceGroupError/alreadyRun``; after ``shutdown()`` it returns at once.
    public func run() async throws {
        var announced = false
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await self.group.run() }
                if (try? await group.started()) != nil {
                    announce()
                    announced = true
                }
                try await tasks.waitForAll()
            }
        } catch ServiceGroupError.serviceFailed(_, let error) where !announced {
            logger.info("stopped")
            throw error
        } catch {
            logger.error("stopping: a service failed", ["error": String(describing: error)])
            logger.info("stopped")
            throw error
        }
        logger.info("stopped")
    }

    /// Returns the HTTP port once every service has started (the servers are bound; migrations go on in the
    /// background); throws why the service stopped before that.
    public func started() async throws -> Int {
        do {
            try await group.started()
        } catch ServiceGroupError.serviceFailed(_, let error) {
            throw error
        }
        guard let port = server.port else { throw ServiceGroupError.stoppedBeforeStarted }
        return port
    }

    /// Says what is on and off, and where the service listens.
    private func announce() {
        if configuration.metricsToken == nil {
            logger.info("metrics off", ["enable": "set METRICS_TOKEN (16 characters or more) to serve /metrics to its bearer"])
        }
        if configuration.adminToken == nil {
            logger.info("admin API off", ["enable": "set SWITCHBOARD_ADMIN_TOKEN (16 characters or more) to serve /v1/admin/*"])
        } else {
            logger.info("admin API on", ["path": "/v1/admin/*"])
        }
        if configuration.webhooks.allowPrivateTargets {
            logger.info("webhooks may reach private and loopback addresses (local development)",
                        ["setting": "WEBHOOK_ALLOW_PRIVATE_TARGETS=1", "production": "unset it, so that endpoints reach only public addresses"])
        }
        if let port = server.port { logger.info("listening", ["port": port]) }
    }

    /// The `application_name` of each process's LISTEN connection (how operators and tests find it).
    public static let listenerName = "switchboard-listener"

    /// Every route the service serves, as (method, template) — for checking the API document against it.
    public let routes: [(method: String, template: String)]

    /// Live event-stream subscribers of this process (all interactions).
    public var liveSubscribers: Int { services.interactionEvents.subscriberCount }

    /// Event streams of this process that opened with a snapshot remembered from an earlier stream's read.
    public var streamsStartedFromMemory: Int { services.interactionEvents.streamsStartedFromMemory }

    /// The bound port while running.
    public var port: Int? { server.port }

    /// The event-stream listener's bound port, when there is one.
    public var streamPort: Int? { streamServer?.port }

    /// Streamed responses open now in the main daemon and in the event streams' own daemon (0 without one).
    /// Streams land in the main daemon only when asked for on a connection that began with another request.
    public var openStreams: (main: Int, streams: Int) { (server.openStreams, streamServer?.openStreams ?? 0) }

    /// Waits until migrations are applied, or until the application stops trying (tests use this before they
    /// touch the schema).
    public func waitUntilMigrated() async {
        let applier = migrationApplier, group = group
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await applier.over.wait() }
            tasks.addTask { await group.finished() }
            await tasks.next()
            tasks.cancelAll()
        }
    }

    /// Graceful shutdown, each step over before the next: readiness turns 503, event streams end, the servers stop
    /// accepting and their in-flight requests finish within the configured deadline, migrations and pruning are
    /// cancelled, the listener stops and its followers finish; then the pools close.
    ///
    /// Idempotent: every caller returns once all of that is over. Before ``run()``, it makes `run()` return at once.
    public func shutdown() async {
        await group.shutdown()
    }
}
