import Accounts
import Feeds
import Foundation
import Interactions
import HTTPServer
import Postgres
import Coordination

/// The whole service wired together: pool, migrations, routes, HTTP server, and an orderly shutdown.
public final class Application: Sendable {
    /// The validated configuration.
    public let configuration: Configuration
    /// The service's logger.
    public let logger: Logger
    /// The Postgres connection pool.
    public let pool: PostgresPool
    let readiness = Readiness()
    let services: Services
    private let server: HTTPServer
    private let streamServer: HTTPServer?
    private let migrations: [Migration]
    /// Guards the background task that applies migrations until the database lets it.
    private let migrationTask = Locked<Task<Void, Never>?>(nil)
    /// The dedicated LISTEN connection carrying other replicas' change notices.
    private let listener: PostgresListener?
    /// Guards the task that applies change notices.
    private let noticeTask = Locked<Task<Void, Never>?>(nil)
    /// Guards the hourly housekeeping task (pruning idempotency records older than 25 hours).
    private let housekeeping = Locked<Task<Void, Never>?>(nil)

    /// Wires the service; nothing runs until `start()`.
    public init(configuration: Configuration, logger: Logger, migrations: [Migration] = Migrations.all) {
        self.configuration = configuration
        self.logger = logger
        self.migrations = migrations
        let metrics = Metrics()
        self.pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: configuration.databaseURL,
                                                 queryObserver: { metrics.recordQuery($0, succeeded: $1) },
                                                 statementDeadline: configuration.statementDeadline,
                                                 applicationName: "switchboard"),
            maxConnections: configuration.poolSize, acquireTimeout: configuration.poolTimeout)
        // The listener marks changed feeds stale the moment it reads a notice (before any task is scheduled), so a
        // read here right after another replica acknowledged its write does not get the old page.
        let staleMarks = Locked<FeedService?>(nil)
        let listener = try? PostgresListener(
            configuration: PostgresConfiguration(connectionString: configuration.databaseURL,
                                                 statementDeadline: min(configuration.statementDeadline, .seconds(10)),
                                                 applicationName: Application.listenerName),
            channels: [FeedStore.channel, InteractionStore.channel, AccountStore.revocationChannel],
            livenessInterval: configuration.listenerLiveness,
            inline: { notices in
                guard let feeds = staleMarks.withLock({ $0 }) else { return }
                for notice in notices where notice.channel == FeedStore.channel { feeds.markChanged(notice: notice.payload) }
            })
        self.listener = listener
        let services = Services(configuration: configuration, pool: pool, logger: logger,
                                listening: { listener?.isConnected ?? false })
        staleMarks.withLock { $0 = services.feeds }
        readiness.listening.withLock { $0 = { listener?.isConnected ?? false } }
        self.services = services
        let servers = Locked<[HTTPServer]>([])
        let router = Routes.router(configuration: configuration, logger: logger, pool: pool, readiness: readiness,
                                   services: services, metrics: metrics,
                                   servers: { servers.withLock { $0 } })
        self.routes = router.routes
        let responder = router.buildResponder()
        // libmicrohttpd's own complaints (malformed requests, failed sends) join the JSON log, rate-limited.
        let libraryLog: @Sendable (String) -> Void = { line in logger.warning("libmicrohttpd", ["message": line]) }
        var serverConfiguration = configuration.server
        serverConfiguration.errorLog = libraryLog
        self.server = HTTPServer(configuration: serverConfiguration, responder: responder.respond(to:),
                                 immediate: responder.respondImmediately(to:))
        self.streamServer = configuration.streamServer.map {
            var streamConfiguration = $0
            streamConfiguration.errorLog = libraryLog
            return HTTPServer(configuration: streamConfiguration, responder: responder.respond(to:),
                              immediate: responder.respondImmediately(to:))
        }
        servers.withLock { $0 = [server] + (streamServer.map { [$0] } ?? []) }
    }

    /// Starts serving and applying migrations (retried until the database is reachable); returns the port.
    @discardableResult
    public func start() async throws -> Int {
        startListening()
        let port = try server.start()
        if let streamServer {
            let streamPort = try streamServer.start()
            logger.info("listening for event streams", ["port": streamPort])
        }
        let task = Task { [self] in await applyMigrations() }
        migrationTask.withLock { $0 = task }
        let writes = IdempotentWrites(pool: pool)
        let logger = logger
        let prune = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(3600))
                if Task.isCancelled { return }
                do { _ = try await writes.prune() } catch { logger.warning("idempotency pruning failed", ["error": "\(error)"]) }
            }
        }
        housekeeping.withLock { $0 = prune }
        if configuration.metricsToken == nil {
            logger.info("metrics off", ["enable": "set METRICS_TOKEN (16 characters or more) to serve /metrics to its bearer"])
        }
        if configuration.adminToken == nil {
            logger.info("admin API off", ["enable": "set SWITCHBOARD_ADMIN_TOKEN (16 characters or more) to serve /v1/admin/*"])
        } else {
            logger.info("admin API on", ["path": "/v1/admin/*"])
        }
        logger.info("listening", ["port": port])
        return port
    }

    /// The `application_name` of each process's LISTEN connection (how operators and tests find it).
    public static let listenerName = "switchboard-listener"

    /// Every route the service serves, as (method, template) — for checking the API document against it.
    public let routes: [(method: String, template: String)]

    /// Live event-stream subscribers of this process (all interactions).
    public var liveSubscribers: Int { services.interactionEvents.subscriberCount }

    /// The bound port while running.
    public var port: Int? { server.port }

    /// The event-stream listener's bound port, when there is one.
    public var streamPort: Int? { streamServer?.port }

    /// Waits until migrations are applied (tests use this before they touch the schema).
    public func waitUntilMigrated() async {
        let task = migrationTask.withLock { $0 }
        await task?.value
    }

    private func applyMigrations() async {
        var delay = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                let applied = try await Migrator.apply(migrations, pool: pool)
                if !applied.isEmpty { logger.info("migrations applied", ["versions": applied.map(String.init).joined(separator: ",")]) }
                readiness.markMigrated()
                return
            } catch {
                logger.warning("migrations not applied yet", ["error": String(describing: error)])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Applies change notices from every replica (this one included): to the feed caches, and to the interaction
    /// event streams — each by one task of its own, so each keeps the notices' order.
    private func startListening() {
        guard let listener else { return }
        let feedNotices = listener.notifications()
        let interactionNotices = listener.notifications()
        let revocationNotices = listener.notifications()
        let feeds = services.feeds
        let interactions = services.interactionEvents
        let accounts = services.accounts
        let tokens = services.tokens
        let logger = logger
        let task = Task {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await Self.follow(feedNotices, channel: FeedStore.channel, apply: feeds.apply(notice:)) {
                        logger.warning("change-notice listener reconnected; dropping feed caches")
                        await feeds.invalidateAll()
                    }
                }
                group.addTask {
                    await Self.follow(interactionNotices, channel: InteractionStore.channel,
                                      apply: interactions.handle(notice:), afterReconnect: interactions.catchUp)
                }
                // A revoked session's streams end on every replica; after a reconnect, live streams' sessions are
                // checked in one query, for revocations whose notices were missed.
                group.addTask {
                    await Self.follow(revocationNotices, channel: AccountStore.revocationChannel, apply: { payload in
                        guard let session = UUID(uuidString: payload) else { return }
                        interactions.endStreams(ofSession: session)
                        // The revoked token may sit in this replica's cache: drop it (the cache knows tokens, not
                        // sessions, so all of it), and REST calls with it are refused now rather than within 5 s.
                        await tokens.forgetAll()
                    }, afterReconnect: {
                        do {
                            for session in try await accounts.endedSessions(among: interactions.sessionsWithStreams) {
                                interactions.endStreams(ofSession: session)
                            }
                        } catch {
                            logger.warning("cannot check live streams' sessions", ["error": String(describing: error)])
                        }
                    })
                }
            }
        }
        noticeTask.withLock { $0 = task }
        listener.start()
    }

    /// Hands each notice on `channel` to `apply`, in order, and runs `afterReconnect` when the listener had to
    /// reconnect (notices may have been missed meanwhile).
    private static func follow(_ events: AsyncStream<ListenerEvent>, channel: String,
                               apply: @Sendable (String) async -> Void,
                               afterReconnect: @Sendable () async -> Void) async {
        for await event in events {
            switch event {
            case .notification(let notice) where notice.channel == channel: await apply(notice.payload)
            case .reconnected: await afterReconnect()
            default: break
            }
        }
    }

    /// Serves until SIGTERM or SIGINT, then shuts down.
    public func runUntilSignalled() async throws {
        try await start()
        let signal = await Signals.wait(for: [SIGTERM, SIGINT])
        logger.info("shutting down", ["signal": Int(signal)])
        await shutdown()
    }

    /// Graceful shutdown: readiness turns 503 at once, the listener stops, in-flight requests finish within the
    /// configured deadline, then the pool closes.
    public func shutdown() async {
        readiness.markDraining()
        services.interactionEvents.finishAll()
        async let streams: Void = streamServer?.shutdown(deadline: configuration.shutdownDeadline) ?? ()
        await server.shutdown(deadline: configuration.shutdownDeadline)
        await streams
        migrationTask.withLock { $0 }?.cancel()
        housekeeping.withLock { $0 }?.cancel()
        await listener?.stop()
        await noticeTask.withLock { $0 }?.value
        await pool.close()
        logger.info("stopped")
    }
}
