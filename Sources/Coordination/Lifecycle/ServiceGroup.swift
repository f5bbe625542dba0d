/// Runs services together, the way swift-service-lifecycle's `ServiceGroup` does: started in order (each one
/// prepared before the next starts), shut down gracefully in reverse order (each one has returned before the next
/// is told), and whatever still runs when the shutdown deadline passes is cancelled.
///
/// A service that returns or throws on its own stops the group (the others are shut down in reverse order) and
/// `run()` throws the reason. `run()` runs once; ``shutdown()`` may be called any number of times, from anywhere,
/// and always returns after the group has finished. The group is inert until `run()`.
public final class ServiceGroup: Sendable {
    enum Event: Sendable {
        case prepared(Int)
        case finished(Int, (any Error)?)
        case shutdownRequested
        case deadlinePassed
    }

    private enum State {
        case idle
        case running(AsyncStream<Event>.Continuation)
        case shutDownBeforeRun
        case finished
    }

    let services: [any Service]
    let names: [String]
    /// How long graceful shutdown may take before the services still running are cancelled; nil waits for ever.
    public let gracefulShutdownDeadline: Duration?
    /// Guards the group's lifecycle (and the way to reach a running group's event loop).
    private let state = Locked<State>(.idle)
    /// Guards why the group stopped before all of it started, once it did.
    private let startFailure = Locked<(any Error)?>(nil)
    private let startedGate = Gate()
    private let finishedGate = Gate()
    /// Called between the group's steps; tests pass one that parks the caller to try every interleaving.
    let checkpoint: @Sendable (String) async -> Void

    /// A group of `services`, in start order. Errors name a service by its `description` when it has one, else by
    /// its type.
    public convenience init(services: [any Service], gracefulShutdownDeadline: Duration? = nil) {
        self.init(services: services, gracefulShutdownDeadline: gracefulShutdownDeadline, checkpoint: { _ in })
    }

    init(services: [any Service], gracefulShutdownDeadline: Duration?, checkpoint: @escaping @Sendable (String) async -> Void) {
        self.checkpoint = checkpoint
        self.services = services
        self.names = services.map { ($0 as? any CustomStringConvertible)?.description ?? String(describing: type(of: $0)) }
        self.gracefulShutdownDeadline = gracefulShutdownDeadline
    }

    /// Runs every service until shutdown, or until one of them stops on its own (then throws why).
    ///
    /// A second call throws ``ServiceGroupError/alreadyRun``. After ``shutdown()`` before any `run()`, returns at
    /// once without starting anything.
    public func run() async throws {
        await checkpoint("run")
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let begin = state.withLock { state -> Bool? in
            switch state {
            case .idle:
                state = .running(continuation)
                return true
            case .shutDownBeforeRun:
                state = .finished
                return false
            case .running, .finished:
                return nil
            }
        }
        guard let begin else { throw ServiceGroupError.alreadyRun }
        guard begin else { return }
        defer {
            continuation.finish()
            state.withLock { $0 = .finished }
            if !startedGate.isOpen { startFailed(ServiceGroupError.stoppedBeforeStarted) }
            finishedGate.open()
        }
        if let failure = await runServices(events, continuation) { throw failure }
    }

    /// Returns once every service was prepared (for example, servers bound); throws why the group stopped if it
    /// stopped first (``ServiceGroupError/stoppedBeforeStarted`` after an early shutdown).
    public func started() async throws {
        await checkpoint("started")
        await startedGate.wait()
        try Task.checkCancellation()
        if let failure = startFailure.withLock({ $0 }) { throw failure }
    }

    /// Requests graceful shutdown and returns once the group has finished (every service returned). Idempotent:
    /// a second caller waits for the same end. Before `run()`, it makes the group finish without starting.
    public func shutdown() async {
        await checkpoint("shutdown")
        let request = state.withLock { state -> AsyncStream<Event>.Continuation? in
            if case .idle = state { state = .shutDownBeforeRun }
            if case .running(let continuation) = state { return continuation }
            return nil
        }
        await checkpoint("shutdown, marked")
        if let request {
            request.yield(.shutdownRequested)
        } else if state.withLock({ if case .shutDownBeforeRun = $0 { return true } else { return false } }) {
            startFailure.withLock { $0 = $0 ?? ServiceGroupError.stoppedBeforeStarted }
            startedGate.open()
            finishedGate.open()
        }
        await finishedGate.wait()
    }

    /// Records why the group stopped before all of it started, and releases ``started()``'s waiters.
    func startFailed(_ error: any Error) {
        startFailure.withLock { $0 = $0 ?? error }
        startedGate.open()
    }

    /// Every service is prepared.
    func allStarted() { startedGate.open() }
}
