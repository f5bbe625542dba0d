import HTTPServer

/// Answers API calls with 503 and `Retry-After` until the migrations are applied, as during a database outage:
/// before that, a query could only fail on a missing table, and a client should retry rather than see a 500.
/// Health, readiness, metrics and the API document stay served.
struct MigrationGate: Middleware {
    let readiness: Readiness

    func prepare(_ request: inout Request) throws {
        if isClosed(to: request) { throw MigrationGate.notReady }
    }

    private func isClosed(to request: Request) -> Bool {
        // The flag first: once migrated (nearly always), no request's path is read.
        !readiness.isMigrated && request.path.hasPrefix("/v1/")
    }

    private static let notReady = Problem.serviceUnavailable("The database is not ready yet; retry shortly.",
                                                             retryAfterSeconds: 1)
}
