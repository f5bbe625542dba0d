import Accounts
import Console
import Coordination
import Feeds
import Interactions
import Foundation
import HTTPServer
import Postgres
import Webhooks

/// The domain services of one process, built once and shared by routes, listeners and metrics.
struct Services: Sendable {
    let accounts: AccountStore
    let tokens: TokenStore
    let guardian: AccessGuard
    let feeds: FeedService
    let interactionEvents: InteractionEvents
    let inbox: InboxFeed
    let presence: PresenceKeeper
    let webhooks: WebhookDelivery
    let retention: RetentionStatistics
    /// Erasures this process completed (for the metrics).
    let erasuresCompleted = Locked(0)

    init(configuration: Configuration, pool: PostgresPool, deliveryPool: PostgresPool, feeds: FeedService, logger: Logger,
         notices: @escaping @Sendable () -> AsyncStream<ListenerEvent>?, migrated: @escaping @Sendable () async -> Void) {
        accounts = AccountStore(pool: pool)
        tokens = TokenStore(store: accounts)
        let limiter = configuration.rateLimitPerMinute > 0 ? RateLimiter(perMinute: configuration.rateLimitPerMinute) : nil
        guardian = AccessGuard(tokens: tokens, limiter: limiter)
        self.feeds = feeds
        interactionEvents = InteractionEvents(
            pool: pool, heartbeat: configuration.heartbeat, reconnectDelay: configuration.reconnectDelay,
            streamsPerPrincipal: configuration.streamsPerPrincipal,
            onDispatchFailure: { error in
                logger.warning("live event dispatch failed; retrying", ["error": String(describing: error)])
            })
        inbox = InboxFeed(pool: pool, positionKey: configuration.inboxPositionKey,
                          streamsPerPrincipal: configuration.inboxStreamsPerPrincipal, heartbeat: configuration.heartbeat,
                          reconnectDelay: configuration.reconnectDelay, ready: migrated,
                          onFailure: { error in
                              logger.warning("inbox batch failed; retrying", ["error": String(describing: error)])
                          })
        presence = PresenceKeeper(pool: pool, inbox: inbox, grace: configuration.presenceGrace, ready: migrated,
                                  onFailure: { error in
                                      logger.warning("presence round failed; retrying", ["error": String(describing: error)])
                                  })
        retention = RetentionStatistics()
        webhooks = WebhookDelivery(pool: deliveryPool, settings: configuration.webhooks,
                                   log: .init(info: { logger.info($0, $1) }, warning: { logger.warning($0, $1) }),
                                   notices: notices, ready: migrated)
    }
}

/// Builds the service's router: middleware, operational endpoints and every module's routes.
enum Routes {
    /// The paths whose connections the main server hands to the event-stream server.
    static let eventStreamPaths = [PathPattern(InteractionRoutes.eventStreamTemplate), PathPattern(InboxStreamRoute.template)]

    static func router(configuration: Configuration, logger: Logger, pool: PostgresPool, readiness: Readiness,
                       services: Services, metrics: Metrics, logDropped: @escaping @Sendable () -> Int,
                       servers: @escaping @Sendable () -> [HTTPServer]) -> Router {
        var router = Router()
        let accessLog: AccessLogMiddleware.Sink = { request, status, duration in
            metrics.record(method: request.method, route: request.route, status: status, duration: duration)
            AccessLog.write(request, status: status, duration: duration, to: logger)
        }
        router.use(RequestIDMiddleware())
        router.use(AccessLogMiddleware(sink: accessLog))
        router.use(ErrorMiddleware(map: PostgresProblems.problem(for:)) { request, error in
            logger.error("unhandled error", ["request_id": request.id, "route": request.route ?? "-",
                                             "error": String(describing: error)])
        })
        router.use(MigrationGate(readiness: readiness))
        HealthRoutes(pool: pool, readiness: readiness).register(on: &router)
        MetricsRoute(metrics: metrics, pool: pool, services: services, servers: servers, token: configuration.metricsToken,
                     logDropped: logDropped).register(on: &router)
        AccountRoutes(store: services.accounts, tokens: services.tokens, guardian: services.guardian,
                      adminToken: configuration.adminToken).register(on: &router)
        AuditRoutes(pool: pool, guardian: services.guardian, adminToken: configuration.adminToken).register(on: &router)
        FeedRoutes(service: services.feeds, guardian: services.guardian).register(on: &router)
        InteractionRoutes(pool: pool, guardian: services.guardian, events: services.interactionEvents,
                          presence: services.presence)
            .register(on: &router)
        AttachmentRoutes(pool: pool, policy: configuration.attachments, guardian: services.guardian).register(on: &router)
        InboxStreamRoute(feed: services.inbox, guardian: services.guardian).register(on: &router)
        AgentRoutes(presence: services.presence, guardian: services.guardian).register(on: &router)
        SettingsRoutes(pool: pool, guardian: services.guardian, presence: services.presence,
                       retentionFloorDays: configuration.retentionFloorDays).register(on: &router)
        LegalHoldRoutes(pool: pool, guardian: services.guardian).register(on: &router)
        ExportRoutes(pool: pool, guardian: services.guardian).register(on: &router)
        ErasureRoutes(pool: pool, guardian: services.guardian).register(on: &router)
        WebhookRoutes(pool: pool, guardian: services.guardian, adminToken: configuration.adminToken,
                      settings: configuration.webhooks).register(on: &router)
        if configuration.console {
            ConsoleRoutes(pool: pool, accounts: services.accounts, guardian: services.guardian, publicURL: configuration.publicURL)
                .register(on: &router)
        }
        if configuration.testRoutes { TestRoutes.register(on: &router) }
        return router
    }
}
