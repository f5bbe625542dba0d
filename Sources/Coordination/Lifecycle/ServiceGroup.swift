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

    let services: [any Service]
    let names: [String]
    /// How long graceful shutdown may take before the services still running are cancelled; nil waits for ever.
    public let gracefulShutdownDeadline: Duration?
    /// Guards the group's lifecycle: its phase, how its start went, and who waits for the start or the end.
    private let lifecycle = Locked(ServiceGroupLifecycle())
    /// When it returns, the group shuts down as if ``shutdown()`` was called (a signal, say); it must return
    /// when its task is cancelled.
    let shutdownTrigger: (@Sendable () async -> Void)?
    /// Called between the group's steps; tests pass one that parks the caller to try every interleaving.
    let checkpoint: @Sendable (String) async -> Void

    /// A group of `services`, in start order. Errors name a service by its `description` when it has one, else by
    /// its type. When `shutdownTrigger` returns while the group runs, the group shuts down (it is cancelled when
    /// the group ends, and must then return).
    public convenience init(services: [any Service], gracefulShutdownDeadline: Duration? = nil,
                            shutdownTrigger: (@Sendable () async -> Void)? = nil) {
        self.init(services: services, gracefulShutdownDeadline: gracefulShutdownDeadline, shutdownTrigger: shutdownTrigger,
                  checkpoint: { _ in })
    }

    init(services: [any Service], gracefulShutdownDeadline: Duration?, shutdownTrigger: (@Sendable () async -> Void)? = nil,
         checkpoint: @escaping @Sendable (String) async -> Void) {
        self.shutdownTrigger = shutdownTrigger
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
        switch lifecycle.withLock({ $0.run(events: continuation) }) {
        case .alreadyRun: throw ServiceGroupError.alreadyRun
        case .returnAtOnce: return
        case .runServices: break
        }
        let failure = await runServices(events, continuation)
        continuation.finish()
        lifecycle.withLock { $0.runEnded() }.resumeAll()
        if let failure { throw failure }
    }

    /// Returns once every service was prepared (for example, servers bound); throws why the group stopped if it
    /// stopped first (``ServiceGroupError/stoppedBeforeStarted`` after an early shutdown).
    public func started() async throws {
        await checkpoint("started")
        await lifecycle.wait(until: { $0.startOutcome != nil }, in: \.startWaiters)
        try Task.checkCancellation()
        if case .failure(let error) = lifecycle.withLock({ $0.startOutcome }) { throw error }
    }

    /// Requests graceful shutdown and returns once the group has finished (every service returned). Idempotent:
    /// a second caller waits for the same end. Before `run()`, it makes the group finish without starting.
    public func shutdown() async {
        await checkpoint("shutdown")
        switch lifecycle.withLock({ $0.shutdown() }) {
        case .request(let events): events.yield(.shutdownRequested)
        case .resume(let waiters): waiters.resumeAll()
        case .none: break
        }
        await checkpoint("shutdown, requested")
        await finished()
    }

    /// Returns once the group has finished, without asking it to (or as soon as the calling task is cancelled).
    public func finished() async {
        await lifecycle.wait(until: { $0.isFinished }, in: \.endWaiters)
    }

    /// Records why the group stopped before all of it started, and releases ``started()``'s waiters.
    func startFailed(_ error: any Error) { lifecycle.withLock { $0.startFailed(error) }.resumeAll() }

    /// Every service is prepared.
    func allStarted() { lifecycle.withLock { $0.started() }.resumeAll() }
}
