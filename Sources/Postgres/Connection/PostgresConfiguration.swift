/// How to reach the server (a libpq connection string and a connect timeout), and how to wait for it.
public struct PostgresConfiguration: Sendable {
    /// A `postgres://user:password@host:port/db?sslmode=…` URI or a `host=… port=… user=… dbname=…` string;
    /// libpq parses both. Unset values fall back to libpq's `PG*` environment variables.
    public var connectionString: String
    /// How long one connection attempt (TCP or Unix socket, TLS, authentication) may take: as given, else the
    /// connection string's `connect_timeout` (seconds, as libpq reads it), else 5 s.
    public var connectTimeout: Duration
    /// Told how long each statement took and whether it succeeded (for metrics); must be quick.
    public var queryObserver: (@Sendable (Duration, Bool) -> Void)?
    /// How long one statement may wait for the server's answer before it is cancelled (a `.deadline` error).
    /// Nil: no deadline.
    public var statementDeadline: Duration?
    /// After a deadline's cancel request, how long to wait for the server to answer at all; past it the connection
    /// is given up as dead (a half-open TCP connection, a blackholed route) and discarded.
    public var cancelGrace: Duration
    /// `application_name` for the server's views (`pg_stat_activity`), unless the connection string sets one.
    public var applicationName: String?
    /// Server settings for every session of this configuration (`-c name=value` in the startup `options`), e.g.
    /// `synchronous_commit=off` for connections whose writes may be lost in a server crash. Names and values
    /// must not contain spaces or backslashes.
    public var sessionSettings: [String: String]
    /// Waits for the connections' sockets and runs their timers.
    public var reactor: SocketReactor

    /// Describes a server; nothing is validated or contacted until a connection is opened.
    public init(connectionString: String, connectTimeout: Duration? = nil,
                queryObserver: (@Sendable (Duration, Bool) -> Void)? = nil,
                statementDeadline: Duration? = .seconds(30), cancelGrace: Duration = .seconds(3),
                applicationName: String? = nil, sessionSettings: [String: String] = [:], reactor: SocketReactor? = nil) {
        self.reactor = reactor ?? .shared
        self.connectionString = connectionString
        self.connectTimeout = connectTimeout ?? PostgresConfiguration.connectTimeout(in: connectionString) ?? .seconds(5)
        self.queryObserver = queryObserver
        self.statementDeadline = statementDeadline
        self.cancelGrace = cancelGrace
        self.applicationName = applicationName
        precondition(sessionSettings.allSatisfy { setting in
            !(setting.key + setting.value).contains { $0 == " " || $0 == "\\" }
        }, "session settings may not contain spaces or backslashes")
        self.sessionSettings = sessionSettings
    }
}

extension PostgresConfiguration {
    /// The positive `connect_timeout` the connection string sets, if any (libpq waits at least 2 s; so does this).
    static func connectTimeout(in connectionString: String) -> Duration? {
        guard let parameters = try? ConnectionParameters(connectionString: connectionString),
              let text = parameters.value(of: "connect_timeout"), let seconds = Int(text), seconds > 0 else { return nil }
        return .seconds(max(2, seconds))
    }

    /// Checks that libpq can parse `connectionString` (a typo in a URI, say), without contacting any server, so a
    /// service can refuse to start on a string that no retry will ever make usable.
    public func validate() throws(PostgresError) {
        _ = try ConnectionParameters(connectionString: connectionString)
    }
}
