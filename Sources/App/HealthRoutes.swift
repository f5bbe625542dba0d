import HTTPServer
import Postgres

/// `GET /healthz` (the process is alive) and `GET /readyz` (it should get traffic).
struct HealthRoutes {
    let pool: PostgresPool
    let readiness: Readiness

    private static let alive = Response(status: 200, headers: ["Content-Type": "application/json",
                                                                 "Cache-Control": "no-store"],
                                        body: Array(#"{"status":"ok"}"#.utf8))

    func register(on router: inout Router) {
        router.get("/healthz") { _ in HealthRoutes.alive }
        let document = PackageResources.openapi_yaml
        router.get("/openapi.yaml") { _ in
            Response(status: 200, headers: ["Content-Type": "application/yaml; charset=utf-8", "Cache-Control": "no-cache"],
                     body: document)
        }
        router.get("/readyz") { [pool, readiness] _ in
            try await HealthRoutes.ready(pool: pool, readiness: readiness)
        }
    }

    static func ready(pool: PostgresPool, readiness: Readiness) async throws -> Response {
        guard !readiness.isDraining else {
            throw Problem.serviceUnavailable("The service is shutting down.")
        }
        guard readiness.isMigrated else {
            throw Problem.serviceUnavailable("Database migrations have not been applied yet.")
        }
        guard readiness.isListening else {
            // Without change notices this replica could serve pages other replicas have changed.
            throw Problem.serviceUnavailable("The change-notice listener is not connected.")
        }
        do {
            _ = try await pool.withConnection { connection in try await connection.query("SELECT 1") }
        } catch {
            throw Problem.serviceUnavailable("The database is unreachable.")
        }
        return try Response.json(["status": "ready"], headers: ["Cache-Control": "no-store"])
    }
}
