import App
import Foundation
import HTTPServer
import Interactions
import Postgres
import Testing
import Webhooks
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Lets at most `limit` callers in at a time; the others wait in order.
actor ChurnGate {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { free = limit }

    func enter() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// A database of its own for one test: created empty, migrated by the app, dropped afterwards.
/// Per-test databases keep parallel tests apart, including in `pg_stat_statements` (counted per database).
struct TestDatabase: Sendable {
    let name: String
    let url: String

    /// At most four databases are created or dropped at a time. The suite starts a hundred tests at once, and
    /// a storm of CREATE and DROP DATABASE (each drop forces a checkpoint) held other tests' connections past
    /// their timeouts.
    private static let churn = ChurnGate(limit: 4)

    static func create() async throws -> TestDatabase {
        await churn.enter()
        do {
            let database = try await createNow()
            await churn.leave()
            return database
        } catch {
            await churn.leave()
            throw error
        }
    }

    private static func createNow() async throws -> TestDatabase {
        let name = "sb_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let admin = PostgresPool(configuration: PostgresConfiguration(connectionString: TestEnvironment.databaseURL),
                                 maxConnections: 1)
        _ = try await admin.withConnection { try await $0.query("CREATE DATABASE \(name)") }
        await admin.close()
        let database = TestDatabase(name: name, url: TestEnvironment.databaseURL + " dbname=\(name)")
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 1)
        _ = try await pool.withConnection { try await $0.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        await pool.close()
        return database
    }

    func drop() async {
        await Self.churn.enter()
        await dropNow()
        await Self.churn.leave()
    }

    private func dropNow() async {
        let admin = PostgresPool(configuration: PostgresConfiguration(connectionString: TestEnvironment.databaseURL),
                                 maxConnections: 1)
        _ = try? await admin.withConnection { try await $0.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        await admin.close()
    }

    /// How many times statements whose text is like `pattern` ran in this database, counted by Postgres itself
    /// (`pg_stat_statements` keeps counts per database, so parallel tests do not disturb each other).
    func statementCalls(like pattern: String) async throws -> Int {
        let rows = try await query("""
            SELECT coalesce(sum(calls), 0)::bigint AS calls FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE $1
            """, [pattern])
        return Int(try rows[0].decode("calls", as: Int64.self))
    }

    /// Two service processes (replicas) over this database, ready (migrated and listening), with an admin token.
    func launchReplicas() async throws -> [SignalTests.Launched] {
        let settings = ["DATABASE_URL": url, "SWITCHBOARD_ADMIN_TOKEN": TestApp.adminToken, "LOG_LEVEL": "info",
                        "RATE_LIMIT_PER_MINUTE": "0"]
        var replicas: [SignalTests.Launched] = []
        for _ in 0 ..< 2 {
            let replica = try await SignalTests.launch(extra: settings)
            #expect(await eventually(timeout: .seconds(20)) {
                (try? await request(port: replica.port, "GET", "/readyz").status) == 200
            })
            replicas.append(replica)
        }
        return replicas
    }

    /// Stops replicas started by `launchReplicas` and drops the database.
    func stop(_ replicas: [SignalTests.Launched]) async throws {
        for replica in replicas { replica.child.signal(SIGTERM) }
        for replica in replicas {
            let (log, status) = try await onThread { (replica.child.readToEnd(), replica.child.wait()) }
            // A crash at shutdown, or (under ThreadSanitizer, exit status 66) a race report, fails the test.
            #expect(status == 0, "replica exited \(status): \(log.suffix(2000))")
        }
        await drop()
    }

    /// Runs one query against this database on a connection of its own.
    func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> PostgresRows {
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: url), maxConnections: 1)
        defer { Task { await pool.close() } }
        return try await pool.withConnection { try await $0.query(sql, parameters) }
    }
}

/// Collects log lines in memory (to check what the service writes).
final class LogCapture: @unchecked Sendable { // guarded by `lock`
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// The whole service on an ephemeral port over a fresh database, with helpers for the accounts flow.
struct TestApp: Sendable {
    static let adminToken = "test-admin-token-0123456789"
    static let metricsToken = "test-metrics-token-0123456789"

    let app: Application
    let port: Int
    let database: TestDatabase
    let log: LogCapture

    static func start(rateLimitPerMinute: Int = 0, adminToken: String? = TestApp.adminToken,
                      database: TestDatabase? = nil, heartbeat: Duration = .seconds(15),
                      reconnectDelay: Duration = .seconds(2), port: Int = 0,
                      streamListener: Bool = false, streamsPerPrincipal: Int = 20, databaseURL: String? = nil,
                      statementDeadline: Duration = .seconds(30), listenerLiveness: Duration = .seconds(10),
                      poolTimeout: Duration = .seconds(5), presenceGrace: Duration = .seconds(30), console: Bool = true,
                      webhooks: WebhookSettings = WebhookSettings(allowPrivateTargets: true),
                      attachments: AttachmentPolicy = AttachmentPolicy(),
                      auditSealKey: [UInt8]? = TestApp.auditSealKey,
                      erasureGrace: Duration = .seconds(10), tasksOnReactor: Bool = false) async throws -> TestApp {
        let database = if let database { database } else { try await TestDatabase.create() }
        let log = LogCapture()
        var configuration = Configuration(
            server: ServerConfiguration(host: "127.0.0.1", port: port, threads: 2),
            streamServer: Self.streamServer(listening: streamListener),
            databaseURL: databaseURL ?? database.url,
            poolSize: 8, poolTimeout: poolTimeout, logLevel: .debug, adminToken: adminToken,
            rateLimitPerMinute: rateLimitPerMinute, heartbeat: heartbeat, reconnectDelay: reconnectDelay,
            streamsPerPrincipal: streamsPerPrincipal, presenceGrace: presenceGrace, console: console,
            metricsToken: TestApp.metricsToken,
            statementDeadline: statementDeadline, listenerLiveness: listenerLiveness, webhooks: webhooks,
            attachments: attachments)
        configuration.auditSealKey = auditSealKey
        configuration.erasureGrace = erasureGrace
        // The service's default (the global executor); `tasksOnReactor` runs requests on the reactor's thread.
        configuration.tasksOnReactor = tasksOnReactor
        let app = Application(configuration: configuration, logger: Logger(level: .debug) { log.append($0) })
        let port = try await app.start()
        await app.waitUntilMigrated()
        return TestApp(app: app, port: port, database: database, log: log)
    }

    /// As in production: event streams have a daemon of their own, handed over from the main port; with
    /// `listening`, it also has a port of its own.
    static func streamServer(listening: Bool) -> ServerConfiguration {
        var configuration = Configuration.eventStreamServer(like: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 1))
        configuration.listens = listening
        return configuration
    }

    /// The audit chain's key in tests (what `AUDIT_SEAL_KEY` holds, as bytes).
    static let auditSealKey: [UInt8] = Array(0 ..< 32)
    /// ``auditSealKey`` as `AUDIT_SEAL_KEY` is written.
    static let auditSealKeyText = Hex.text(auditSealKey)

    func stop() async {
        await app.shutdown()
        await database.drop()
    }

    /// Stops the service but keeps its database, for a restart or for another replica still using it.
    func stopKeepingDatabase() async {
        await app.shutdown()
    }

    func call(_ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:],
              body: String? = nil) async throws -> RawResponse {
        var allHeaders = headers
        if let token { allHeaders["Authorization"] = "Bearer \(token)" }
        return try await request(port: port, method, path, headers: allHeaders, body: body)
    }

    /// `GET /metrics` with the metrics token.
    func metrics() async throws -> RawResponse {
        try await call("GET", "/metrics", token: TestApp.metricsToken)
    }

    /// Creates a tenant through the admin API; returns its id and API key.
    func createTenant(_ name: String = "Tenant") async throws -> (id: String, apiKey: String) {
        let response = try await call("POST", "/v1/admin/tenants", token: TestApp.adminToken, body: #"{"name":"\#(name)"}"#)
        #expect(response.status == 201)
        let json = try response.json()
        return (json["id"] as? String ?? "", json["api_key"] as? String ?? "")
    }

    /// Opens a session for `user` with `role` using the tenant's API key; returns the token.
    func createSession(apiKey: String, user: String, role: String = "customer", ttl: Int? = nil) async throws -> String {
        let ttlField = ttl.map { #","ttl_seconds":\#($0)"# } ?? ""
        let response = try await call("POST", "/v1/sessions", token: apiKey,
                                      body: #"{"user_id":"\#(user)","role":"\#(role)"\#(ttlField)}"#)
        #expect(response.status == 201)
        return try response.json()["token"] as? String ?? ""
    }
}
