import Foundation
import HTTPServer
import Interactions
import Postgres
import Webhooks

/// Everything the service reads from its environment, validated once at start-up.
public struct Configuration: Sendable {
    /// HTTP listener settings (`HOST`, `PORT`, `HTTP_THREADS`, `HTTP_CONNECTION_LIMIT`, `HTTP_IDLE_TIMEOUT_SECONDS`,
    /// `BODY_LIMIT_BYTES`).
    public var server: ServerConfiguration
    /// The event streams' own daemon. Thousands of idle streams are suspended connections, and libmicrohttpd walks
    /// a daemon's list of suspended connections on every resume, so streams are kept apart and API requests stay
    /// fast. It takes the connections that ask for a stream first on `PORT` (see `streamHandoff`), and listens on
    /// `STREAM_PORT` too (default `PORT`+1, or a free port when `PORT` is 0; `off`: no port of its own). Every route
    /// is served by both daemons. Nil (`STREAM_PORT=off` with `STREAM_HANDOFF=0`): one daemon serves everything.
    public var streamServer: ServerConfiguration?
    /// Whether `PORT` hands connections whose first request opens an event stream to `streamServer`
    /// (`STREAM_HANDOFF`, default 1). Connections kept alive keep their daemon: a proxy that pools upstream
    /// connections should route streams to `STREAM_PORT` instead.
    public var streamHandoff: Bool
    /// libpq connection string or URI (`DATABASE_URL`).
    public var databaseURL: String
    /// Most Postgres connections held by this process (`DATABASE_POOL_SIZE`).
    public var poolSize: Int
    /// How long a request waits for a pooled connection before a 503 (`DATABASE_POOL_TIMEOUT_MS`).
    public var poolTimeout: Duration
    /// The lowest level written to the log (`LOG_LEVEL`).
    public var logLevel: LogLevel
    /// Bytes of log lines that may wait to be written (`LOG_BUFFER_BYTES`); when full, lines are dropped and counted.
    public var logBufferBytes: Int
    /// How long shutdown waits for in-flight requests (`SHUTDOWN_DEADLINE_SECONDS`).
    public var shutdownDeadline: Duration
    /// The operator's bearer token for `/v1/admin/*` (`SWITCHBOARD_ADMIN_TOKEN`); the admin API is off when unset.
    public var adminToken: String?
    /// Requests a minute per principal (`RATE_LIMIT_PER_MINUTE`); 0 turns rate limiting off.
    public var rateLimitPerMinute: Int
    /// Serves hot feed pages from memory (`FEED_CACHE`, default 1); 0 reads every page from Postgres (still deduped).
    public var feedCache: Bool
    /// Interval of the heartbeat comment on event streams (`SSE_HEARTBEAT_SECONDS`).
    public var heartbeat: Duration
    /// How long event-stream clients wait before reconnecting: the streams' `retry:` field (`SSE_RETRY_MS`).
    public var reconnectDelay: Duration
    /// How long one database statement may wait for its answer (`DATABASE_STATEMENT_TIMEOUT_MS`); then it is
    /// cancelled and the request answered 503, and a connection whose server does not answer the cancel is discarded.
    public var statementDeadline: Duration
    /// How long the LISTEN connection may stay quiet before a round trip checks it is alive.
    public var listenerLiveness: Duration
    /// The bearer token `GET /metrics` requires (`METRICS_TOKEN`); unset, metrics are not served at all.
    public var metricsToken: String?
    /// Most live event streams one user (tenant, role, user id) may hold in one process (`STREAMS_PER_PRINCIPAL`).
    public var streamsPerPrincipal: Int
    /// Most inbox streams one agent may hold in one process, apart from the above (`INBOX_STREAMS_PER_PRINCIPAL`).
    public var inboxStreamsPerPrincipal: Int
    /// The 32-byte key inbox positions are sealed with (`INBOX_POSITION_KEY`, 64 hex digits, the same on every
    /// replica); unset, the replicas share one kept in the database.
    public var inboxPositionKey: [UInt8]?
    /// How long an agent stays online after its last inbox stream ends (`PRESENCE_GRACE_SECONDS`), without new
    /// automatic assignments meanwhile.
    public var presenceGrace: Duration
    /// Webhook delivery: `WEBHOOK_RETRY_SCHEDULE` (comma-separated seconds between attempts), `WEBHOOK_TIMEOUT_SECONDS`
    /// (per attempt), `WEBHOOK_ALLOW_PRIVATE_TARGETS` (1 lets private and loopback targets through: the local-development setting),
    /// `WEBHOOK_CONCURRENCY` (attempts in flight per process), `WEBHOOK_SECRET_OVERLAP_SECONDS` (how long a rotated-out
    /// secret keeps signing), `WEBHOOK_CLAIM_INTERVAL_MS` (the shortest time between two claims of one worker).
    public var webhooks: WebhookSettings
    /// Attachments' limits: `ATTACHMENT_MAX_BYTES` (10 MiB), `ATTACHMENT_QUOTA_BYTES_PER_TENANT` (10 GiB),
    /// `ATTACHMENT_ORPHAN_HOURS` (24: how long an upload no message carries is kept), `ATTACHMENT_UPLOADS_PER_MINUTE`
    /// (30, per user or API key, per process), `ATTACHMENT_CLAMD_SOCKET` (a ClamAV daemon's socket; unset: no scanning).
    public var attachments: AttachmentPolicy
    /// The audit chain's key (`AUDIT_SEAL_KEY`, 64 hexadecimal digits; never stored in the database): without it
    /// entries are recorded but not sealed.
    public var auditSealKey: [UInt8]?
    /// Audit entries older than this many days are deleted (`AUDIT_RETENTION_DAYS`, 400).
    public var auditRetentionDays = 400
    /// The fewest days a tenant's `retention_days` may keep ended interactions (`RETENTION_MIN_DAYS`, 1).
    public var retentionFloorDays = 1
    /// How often each replica looks for interactions past their retention (`RETENTION_INTERVAL_SECONDS`, 60).
    public var retentionInterval = Duration.seconds(60)
    /// How long after its request an erasure starts (`ERASURE_GRACE_SECONDS`, 10): longer than any token cache keeps
    /// a revoked session and than any request under way with one.
    public var erasureGrace = Duration.seconds(10)
    /// Serves the agent console at `/console/` (`CONSOLE`, 1 by default; 0 turns it off).
    public var console: Bool
    /// Where the service is reached from outside (`PUBLIC_URL`: `https://support.example.com`), for the links a
    /// tenant's backend hands agents; unset, links carry their path alone. Never taken from a request's `Host`.
    public var publicURL: String?
    /// Requests' tasks run on the thread that waits for the database's sockets (`TASKS_ON_REACTOR=1`), so a query's
    /// answer resumes its request without a hop to another thread. Off by default (the global executor): at rest it
    /// saves a POST three context switches, but under `bench/writes.sh`'s load it cost CPU and throughput.
    public var tasksOnReactor = false
    /// Registers `/_test/*` routes used by the end-to-end tests (`SWITCHBOARD_TEST_ROUTES=1`); never in production.
    public var testRoutes: Bool

    /// Creates a configuration with the given values (tests) — see `fromEnvironment` for the service's defaults.
    public init(server: ServerConfiguration = ServerConfiguration(), streamServer: ServerConfiguration? = nil,
                streamHandoff: Bool = true, databaseURL: String,
                poolSize: Int = 10, poolTimeout: Duration = .seconds(5), logLevel: LogLevel = .info,
                logBufferBytes: Int = 4 << 20, shutdownDeadline: Duration = .seconds(10), adminToken: String? = nil, rateLimitPerMinute: Int = 600,
                feedCache: Bool = true, heartbeat: Duration = .seconds(15), reconnectDelay: Duration = .seconds(2),
                testRoutes: Bool = false, streamsPerPrincipal: Int = 20, inboxStreamsPerPrincipal: Int = 5,
                inboxPositionKey: [UInt8]? = nil, presenceGrace: Duration = .seconds(30), console: Bool = true,
                publicURL: String? = nil, metricsToken: String? = nil,
                statementDeadline: Duration = .seconds(30), listenerLiveness: Duration = .seconds(10),
                webhooks: WebhookSettings = WebhookSettings(), attachments: AttachmentPolicy = AttachmentPolicy()) {
        self.server = server
        self.streamServer = streamServer
        self.streamHandoff = streamHandoff
        self.databaseURL = databaseURL
        self.poolSize = poolSize
        self.poolTimeout = poolTimeout
        self.logLevel = logLevel
        self.logBufferBytes = logBufferBytes
        self.shutdownDeadline = shutdownDeadline
        self.adminToken = adminToken
        self.rateLimitPerMinute = rateLimitPerMinute
        self.feedCache = feedCache
        self.heartbeat = heartbeat
        self.reconnectDelay = reconnectDelay
        self.testRoutes = testRoutes
        self.streamsPerPrincipal = streamsPerPrincipal
        self.inboxStreamsPerPrincipal = inboxStreamsPerPrincipal
        self.inboxPositionKey = inboxPositionKey
        self.presenceGrace = presenceGrace
        self.console = console
        self.publicURL = publicURL
        self.metricsToken = metricsToken
        self.statementDeadline = statementDeadline
        self.listenerLiveness = listenerLiveness
        self.webhooks = webhooks
        self.attachments = attachments
    }

    /// The settings of the event streams' own daemon, from the API daemon's `server`: a held stream's largest cost is
    /// libmicrohttpd's memory pool per connection, so it is 4 KiB here (16 KiB for the API). The front hands this
    /// daemon only heads of at most 2 KiB, which fit with room for the response; on `STREAM_PORT` a head over about
    /// 3.2 KB is refused by libmicrohttpd (closed without an answer, or 431 from 4 KB on). Streams are bodies
    /// delimited by the connection's end (`directStreamWrites`: an idle stream's event is one `send` beside
    /// libmicrohttpd), read through the response's own block: 1 KiB, so that a stream's opening leaves in one or two
    /// writes.
    public static func eventStreamServer(like server: ServerConfiguration) -> ServerConfiguration {
        var streams = server
        streams.connectionMemoryLimit = 4 * 1024
        streams.streamBlockSize = 1024
        streams.directStreamWrites = true
        streams.acceptsOnOwnThread = true
        return streams
    }

    /// Reads and validates the environment; the error names the offending variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> Configuration {
        let reader = EnvironmentReader(environment)
        var server = ServerConfiguration()
        server.port = try reader.integer("PORT", default: 8080, in: 0 ... 65535)
        server.host = try reader.host("HOST")
        server.threads = try reader.integer("HTTP_THREADS", default: ServerConfiguration.coreCount, in: 1 ... 256)
        server.connectionLimit = try reader.integer("HTTP_CONNECTION_LIMIT", default: 16_384, in: 1 ... 1_000_000)
        server.idleTimeoutSeconds = try reader.integer("HTTP_IDLE_TIMEOUT_SECONDS", default: 60, in: 1 ... 86_400)
        server.bodyLimit = try reader.integer("BODY_LIMIT_BYTES", default: 1 << 20, in: 1 ... 1 << 30)
        server.connectionsPerAddress = try reader.integer("HTTP_CONNECTIONS_PER_ADDRESS", default: 256, in: 0 ... 1_000_000)
        let headTimeout = try reader.integer("HTTP_HEAD_TIMEOUT_SECONDS", default: 30, in: 0 ... 86_400)
        server.headTimeout = headTimeout == 0 ? nil : .seconds(headTimeout)
        var streams: ServerConfiguration? = Configuration.eventStreamServer(like: server)
        let handoff = try reader.integer("STREAM_HANDOFF", default: 1, in: 0 ... 1) == 1
        if reader.string("STREAM_PORT")?.lowercased() == "off" {
            streams?.listens = false
            if !handoff { streams = nil }
        } else {
            let defaultPort = server.port == 0 ? 0 : min(65535, server.port + 1)
            streams?.port = try reader.integer("STREAM_PORT", default: defaultPort, in: 0 ... 65535)
        }
        let databaseURL = try databaseURL(reader)
        var configuration = Configuration(
            server: server, streamServer: streams, streamHandoff: handoff, databaseURL: databaseURL,
            poolSize: try reader.integer("DATABASE_POOL_SIZE", default: 10, in: 1 ... 1000),
            poolTimeout: .milliseconds(try reader.integer("DATABASE_POOL_TIMEOUT_MS", default: 5000, in: 1 ... 600_000)),
            logLevel: try reader.logLevel("LOG_LEVEL", default: .info),
            logBufferBytes: try reader.integer("LOG_BUFFER_BYTES", default: 4 << 20, in: 4096 ... 1 << 30),
            shutdownDeadline: .seconds(try reader.integer("SHUTDOWN_DEADLINE_SECONDS", default: 10, in: 0 ... 3600)),
            adminToken: try reader.secret("SWITCHBOARD_ADMIN_TOKEN"),
            rateLimitPerMinute: try reader.integer("RATE_LIMIT_PER_MINUTE", default: 600, in: 0 ... 1_000_000),
            feedCache: try reader.integer("FEED_CACHE", default: 1, in: 0 ... 1) == 1,
            heartbeat: .seconds(try reader.integer("SSE_HEARTBEAT_SECONDS", default: 15, in: 1 ... 3600)),
            reconnectDelay: .milliseconds(try reader.integer("SSE_RETRY_MS", default: 2000, in: 0 ... 600_000)),
            testRoutes: try reader.integer("SWITCHBOARD_TEST_ROUTES", default: 0, in: 0 ... 1) == 1,
            streamsPerPrincipal: try reader.integer("STREAMS_PER_PRINCIPAL", default: 20, in: 1 ... 100_000),
            inboxStreamsPerPrincipal: try reader.integer("INBOX_STREAMS_PER_PRINCIPAL", default: 5, in: 1 ... 1000),
            inboxPositionKey: try reader.key("INBOX_POSITION_KEY"),
            presenceGrace: .seconds(try reader.integer("PRESENCE_GRACE_SECONDS", default: 30, in: 0 ... 3600)),
            console: try reader.integer("CONSOLE", default: 1, in: 0 ... 1) == 1,
            publicURL: try reader.publicURL("PUBLIC_URL"),
            metricsToken: try reader.secret("METRICS_TOKEN"),
            statementDeadline: .milliseconds(try reader.integer("DATABASE_STATEMENT_TIMEOUT_MS", default: 30_000,
                                                                in: 100 ... 3_600_000)),
            webhooks: try webhookSettings(reader), attachments: try attachmentPolicy(reader))
        configuration.tasksOnReactor = try reader.integer("TASKS_ON_REACTOR", default: 0, in: 0 ... 1) == 1
        configuration.auditSealKey = try reader.key("AUDIT_SEAL_KEY")
        configuration.auditRetentionDays = try reader.integer("AUDIT_RETENTION_DAYS", default: 400, in: 1 ... 36_500)
        configuration.retentionFloorDays = try reader.integer("RETENTION_MIN_DAYS", default: 1, in: 1 ... 36_500)
        configuration.retentionInterval = .seconds(try reader.integer("RETENTION_INTERVAL_SECONDS", default: 60, in: 1 ... 86_400))
        configuration.erasureGrace = .seconds(try reader.integer("ERASURE_GRACE_SECONDS", default: 10, in: 6 ... 3_600))
        return configuration
    }

    static func attachmentPolicy(_ reader: EnvironmentReader) throws -> AttachmentPolicy {
        AttachmentPolicy(
            maximumBytes: try reader.integer("ATTACHMENT_MAX_BYTES", default: 10 << 20, in: 1 ... 1 << 30),
            quotaBytesPerTenant: Int64(try reader.integer("ATTACHMENT_QUOTA_BYTES_PER_TENANT", default: 10 << 30,
                                                          in: 0 ... 1 << 50)),
            unusedFor: .seconds(3600 * (try reader.integer("ATTACHMENT_ORPHAN_HOURS", default: 24, in: 1 ... 24 * 365))),
            uploadsPerMinute: try reader.integer("ATTACHMENT_UPLOADS_PER_MINUTE", default: 30, in: 1 ... 1_000_000),
            clamdSocket: reader.string("ATTACHMENT_CLAMD_SOCKET").flatMap { $0.isEmpty ? nil : $0 })
    }

    static func webhookSettings(_ reader: EnvironmentReader) throws -> WebhookSettings {
        var settings = WebhookSettings()
        if let text = reader.string("WEBHOOK_RETRY_SCHEDULE"), !text.isEmpty {
            guard let schedule = WebhookSettings.schedule(parsing: text) else {
                throw ConfigurationError(variable: "WEBHOOK_RETRY_SCHEDULE",
                                         problem: "must be 1 to 30 comma-separated delays in seconds (0 to 604800), got '\(text)'")
            }
            settings.retrySchedule = schedule
        }
        settings.timeout = .seconds(try reader.integer("WEBHOOK_TIMEOUT_SECONDS", default: 15, in: 1 ... 300))
        settings.allowPrivateTargets = try reader.integer("WEBHOOK_ALLOW_PRIVATE_TARGETS", default: 0, in: 0 ... 1) == 1
        settings.concurrency = try reader.integer("WEBHOOK_CONCURRENCY", default: 16, in: 1 ... 256)
        settings.secretOverlap = .seconds(try reader.integer("WEBHOOK_SECRET_OVERLAP_SECONDS", default: 86_400, in: 0 ... 30 * 86_400))
        settings.claimInterval = .milliseconds(try reader.integer("WEBHOOK_CLAIM_INTERVAL_MS",
                                                                  default: Int(settings.claimInterval.wholeMilliseconds),
                                                                  in: 0 ... 1000))
        return settings
    }

    /// `DATABASE_URL`, required and parsable by libpq (no server is contacted): a typo stops start-up at once
    /// instead of being retried forever.
    public static func databaseURL(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> String {
        try databaseURL(EnvironmentReader(environment))
    }

    static func databaseURL(_ reader: EnvironmentReader) throws -> String {
        guard let databaseURL = reader.string("DATABASE_URL"), !databaseURL.isEmpty else {
            throw ConfigurationError(variable: "DATABASE_URL", problem: "is required (a libpq connection string or URI)")
        }
        do {
            try PostgresConfiguration(connectionString: databaseURL).validate()
        } catch {
            throw ConfigurationError(variable: "DATABASE_URL",
                                     problem: "is not a libpq connection string or URI "
                                         + "(\(error.message.trimmingCharacters(in: .whitespacesAndNewlines)))")
        }
        return databaseURL
    }
}

/// A configuration variable with an unusable value.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// The environment variable.
    public var variable: String
    /// What is wrong with it.
    public var problem: String

    public var description: String { "\(variable) \(problem)" }
}

/// Typed reads of environment variables.
struct EnvironmentReader {
    let environment: [String: String]

    init(_ environment: [String: String]) { self.environment = environment }

    func string(_ name: String) -> String? {
        environment[name].map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = string(name), !text.isEmpty else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ConfigurationError(variable: name,
                                     problem: "must be an integer from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return number
    }

    func secret(_ name: String) throws -> String? {
        guard let text = string(name), !text.isEmpty else { return nil }
        guard text.utf8.count >= 16 else {
            throw ConfigurationError(variable: name, problem: "must be at least 16 characters")
        }
        return text
    }

    /// An absolute `http` or `https` URL of an origin (and optionally a path), without query or fragment; returned
    /// without its trailing slash.
    func publicURL(_ name: String) throws -> String? {
        guard let text = string(name), !text.isEmpty else { return nil }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil, url.user == nil else {
            throw ConfigurationError(variable: name, problem: "must be an http or https URL such as https://support.example.com, got '\(text)'")
        }
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }

    /// 32 bytes as 64 hexadecimal digits.
    func key(_ name: String) throws -> [UInt8]? {
        guard let text = string(name), !text.isEmpty else { return nil }
        let digits = Array(text.utf8)
        guard digits.count == 64, let key = Optional(stride(from: 0, to: 64, by: 2).compactMap({
            UInt8(String(decoding: digits[$0 ..< $0 + 2], as: UTF8.self), radix: 16)
        })), key.count == 32 else {
            throw ConfigurationError(variable: name, problem: "must be 64 hexadecimal digits (32 bytes)")
        }
        return key
    }

    func host(_ name: String) throws -> String? {
        guard let text = string(name), !text.isEmpty else { return nil }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1 else {
            throw ConfigurationError(variable: name, problem: "must be an IPv4 or IPv6 address, got '\(text)'")
        }
        return text
    }

    func logLevel(_ name: String, default value: LogLevel) throws -> LogLevel {
        guard let text = string(name), !text.isEmpty else { return value }
        guard let level = LogLevel(rawValue: text.lowercased()) else {
            let names = LogLevel.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(variable: name, problem: "must be one of \(names), got '\(text)'")
        }
        return level
    }
}
