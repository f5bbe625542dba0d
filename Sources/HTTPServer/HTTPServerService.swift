import Coordination

/// An ``HTTPServer`` as a ``Service``: bound in `prepare()` (so the next service starts with the port known),
/// drained by ``HTTPServer/shutdown(deadline:)`` at graceful shutdown — and also when cancelled, since a daemon
/// must never be left running with suspended connections.
public struct HTTPServerService: Service, CustomStringConvertible {
    /// The server run by this service.
    public let server: HTTPServer
    /// How long in-flight requests may take to finish at shutdown.
    public let shutdownDeadline: Duration
    /// Told the bound port once the server listens.
    private let onBound: @Sendable (Int) -> Void
    /// The name given at creation; it appears in the service group's errors.
    public let description: String

    /// `name` appears in the service group's errors.
    public init(_ server: HTTPServer, name: String = "HTTP server", shutdownDeadline: Duration,
                onBound: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.server = server
        self.description = name
        self.shutdownDeadline = shutdownDeadline
        self.onBound = onBound
    }

    /// Starts the server and reports its port to `onBound`; throws when it cannot listen.
    public func prepare() async throws {
        onBound(try server.start())
    }

    /// Waits for graceful shutdown (or cancellation), then drains the server within ``shutdownDeadline``.
    public func run() async {
        try? await gracefulShutdown()
        await server.shutdown(deadline: shutdownDeadline)
    }
}
