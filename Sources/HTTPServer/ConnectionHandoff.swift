/// Sends the connections whose first request asks for one of `paths` to another server of the same process.
///
/// libmicrohttpd walks every suspended connection of a daemon each time one of them resumes, so thousands of idle
/// event streams in the API's daemon would slow every API request down. Given a handoff, a server listens through a
/// `ConnectionFront` that reads each new connection's request head (without consuming it) and adds the connection
/// to the daemon it asks for (a head longer than 2 KiB always goes to the API's daemon, whose connections have room
/// for it); both daemons serve every route, so the choice only decides where a connection's cost
/// falls. Only the first request decides: a kept-alive connection stays where it began, so a client (or a proxy
/// pooling upstream connections) that asks for a stream on a connection already used for API calls is served by the
/// API daemon. When `server` is not running, its connections go to the one handing them off.
public struct ConnectionHandoff: Sendable {
    /// The server that takes the matching connections.
    public let server: HTTPServer
    /// The paths whose connections it takes.
    public let paths: [PathPattern]

    /// Hands connections whose first request target matches one of `paths` to `server`.
    public init(to server: HTTPServer, paths: [PathPattern]) {
        self.server = server
        self.paths = paths
    }

    func wants(target: UnsafeRawBufferPointer) -> Bool {
        paths.contains { $0.matches(target: target) }
    }
}
