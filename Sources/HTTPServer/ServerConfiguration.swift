/// How the HTTP server listens and what it allows.
public struct ServerConfiguration: Sendable {
    /// The address to bind (an IPv4 or IPv6 literal); nil binds every interface.
    public var host: String?
    /// The port; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: Int
    /// False: no listening socket; the server serves only what another server's ``ConnectionHandoff`` gives it.
    public var listens = true
    /// Accepts on a thread of its own (a ``ConnectionFront`` that hands each connection to the daemon at once), not
    /// on libmicrohttpd's: that thread takes at most ten connections a turn between serving the others, so a burst of
    /// thousands (event streams reconnecting together) can fill the kernel's accept queue, and a connection whose
    /// SYN is dropped waits a second for its retry. A server with a ``ConnectionHandoff`` always has a front.
    public var acceptsOnOwnThread = false
    /// libmicrohttpd polling threads; each owns a share of the connections.
    public var threads: Int
    /// The most connections served at once (divided among the threads); more wait in the listen backlog.
    public var connectionLimit: Int
    /// Seconds an idle (not suspended) connection may stay open.
    public var idleTimeoutSeconds: Int
    /// The largest request body accepted; larger ones are refused with 413.
    public var bodyLimit: Int
    /// Per-connection memory for headers and buffers (libmicrohttpd's pool; most of a streaming connection's cost).
    public var connectionMemoryLimit: Int
    /// Bytes libmicrohttpd asks a streamed body for at a time (allocated per streamed response).
    public var streamBlockSize: Int
    /// A streamed body's producer waits while this many bytes are queued and not yet sent.
    public var streamHighWater: Int
    /// A streamed request body (``Route/streamsBody``) is read from the client while fewer than this many bytes wait
    /// for its responder; beyond, the connection pauses until the responder catches up.
    public var streamedBodyHighWater = 128 * 1024
    /// After a streamed body's responder has answered, at most this many more bytes of the body are read (and dropped)
    /// so that the answer can be sent; a client that sends more has its connection cut.
    public var refusedBodyDrainLimit = 16 << 20
    /// Requests running longer than this get their socket watched, so a client that leaves cancels them.
    public var disconnectWatchAfter: Duration
    /// Most connections one client address may hold at once (0: no limit). Behind a proxy every client shares the
    /// proxy's address: raise it or turn it off there.
    public var connectionsPerAddress: Int
    /// A request head must arrive complete within this long of the connection opening or of its previous request
    /// completing; dripping bytes does not extend it (the idle timeout alone would be reset by every byte). Also
    /// bounds how long an idle keep-alive connection waits for its next request. Nil: no deadline.
    public var headTimeout: Duration?
    /// The executor each request's task prefers (`Task(executorPreference:)`): its handler's code and the resumptions
    /// after its waits run there (not a streamed body's: an upload's work is heavy). Nil: the global executor.
    public var taskExecutor: (any TaskExecutor)?
    /// Streamed bodies of unknown length end with their connection instead of a last chunk (HTTP/1.1 allows both),
    /// and while libmicrohttpd has such a connection suspended with nothing to send, a write goes to the socket
    /// directly instead of resuming it (see `StreamWriter`): for a daemon holding many idle streams that one event
    /// reaches at once (event streams). The connection is not reused after such a body.
    public var directStreamWrites = false
    /// Receives libmicrohttpd's own error lines (at most a few a second; the rest are counted, not written).
    public var errorLog: (@Sendable (String) -> Void)?

    /// Creates a configuration; the defaults suit production on a small machine.
    public init(host: String? = nil, port: Int = 8080, threads: Int = ServerConfiguration.coreCount,
                connectionLimit: Int = 16_384, idleTimeoutSeconds: Int = 60, bodyLimit: Int = 1 << 20,
                connectionMemoryLimit: Int = 16 * 1024, streamBlockSize: Int = 2048, streamHighWater: Int = 64 * 1024,
                disconnectWatchAfter: Duration = .milliseconds(50), connectionsPerAddress: Int = 0,
                headTimeout: Duration? = .seconds(30), errorLog: (@Sendable (String) -> Void)? = nil) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionLimit = connectionLimit
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.bodyLimit = bodyLimit
        self.connectionMemoryLimit = connectionMemoryLimit
        self.streamBlockSize = streamBlockSize
        self.streamHighWater = streamHighWater
        self.disconnectWatchAfter = disconnectWatchAfter
        self.connectionsPerAddress = connectionsPerAddress
        self.headTimeout = headTimeout
        self.errorLog = errorLog
    }

    /// Connections the kernel queues for a listener before they are accepted (capped by `net.core.somaxconn`).
    /// A full queue drops a client's SYN, which it sends again only after a second: in a reconnect storm of
    /// thousands that second is the slowest client's wait, so the queue is as deep as the kernel usually allows.
    public static let listenBacklog = 4096

    /// The number of online processors.
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

#if canImport(Glibc)
import Glibc
#endif
