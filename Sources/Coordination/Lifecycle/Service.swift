/// A long-running part of a process (a server, a listener, a timer), run and stopped by a ``ServiceGroup``.
///
/// `run()` runs until the task is cancelled or, once graceful shutdown was requested (see ``gracefulShutdown()``,
/// ``withGracefulShutdownHandler(operation:onGracefulShutdown:)``, ``cancelWhenGracefulShutdown(_:)``), until the
/// service has wound down. Returning or throwing before that stops the whole group. Nothing should start in an
/// initialiser: the group decides when a service runs.
public protocol Service: Sendable {
    /// What must be done before the next service of the group starts (bind a socket, subscribe to a source);
    /// throwing stops the group. Does nothing unless implemented.
    func prepare() async throws

    /// Runs the service; see the protocol's documentation for when to return.
    func run() async throws
}

extension Service {
    /// Does nothing: most services need no preparation.
    public func prepare() async throws {}
}
