import Accounts
import Foundation
import HTTPServer
import Postgres

/// Builds the service's router: middleware, operational endpoints and every module's routes.
enum Routes {
    static func router(configuration: Configuration, logger: Logger, pool: PostgresPool, readiness: Readiness) -> Router {
        var router = Router()
        router.use(RequestIDMiddleware())
        router.use(AccessLogMiddleware { entry in AccessLog.write(entry, to: logger) })
        router.use(ErrorMiddleware(map: PostgresProblems.problem(for:)) { request, error in
            logger.error("unhandled error", ["request_id": request.id, "route": request.route ?? "-",
                                             "error": String(describing: error)])
        })
        HealthRoutes(pool: pool, readiness: readiness).register(on: &router)
        let accounts = AccountStore(pool: pool)
        let tokens = TokenStore(store: accounts)
        let limiter = configuration.rateLimitPerMinute > 0 ? RateLimiter(perMinute: configuration.rateLimitPerMinute) : nil
        let guardian = AccessGuard(tokens: tokens, limiter: limiter)
        AccountRoutes(store: accounts, tokens: tokens, guardian: guardian, adminToken: configuration.adminToken)
            .register(on: &router)
        if configuration.testRoutes { TestRoutes.register(on: &router) }
        return router
    }
}
