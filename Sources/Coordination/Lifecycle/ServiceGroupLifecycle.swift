/// Where a ``ServiceGroup`` is in its life — idle, running, finished — with whether its services all started and
/// who waits for that or for the end. Every call of the group is one transition of this value under one lock, and
/// a transition hands back the waiters to resume, so no interleaving of `run`, `shutdown` and `started` can leave
/// a waiter behind.
struct ServiceGroupLifecycle {
    private enum Phase {
        case idle
        case running(AsyncStream<ServiceGroup.Event>.Continuation)
        case finished
    }

    /// What `run()` does next.
    enum RunAction {
        /// Start the services, reporting to this group's event loop.
        case runServices
        /// Shut down before it ran: return without starting anything.
        case returnAtOnce
        /// `run()` was called before.
        case alreadyRun
    }

    /// What `shutdown()` does before it waits for the end.
    enum ShutdownAction {
        /// Tell the running group's event loop.
        case request(AsyncStream<ServiceGroup.Event>.Continuation)
        /// The group finished in this transition (it never ran): resume these waiters.
        case resume([CheckedContinuation<Void, Never>])
        /// Already finished or finishing: just wait.
        case none
    }

    private var phase = Phase.idle
    private var runCalled = false
    /// Whether every service was prepared (success) or the group stopped first (why); nil while not known.
    private(set) var startOutcome: Result<Void, any Error>?
    var startWaiters = WaiterList()
    var endWaiters = WaiterList()

    /// Whether the group has finished (every service returned, or it never ran).
    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// `run()` was called; `events` reaches the event loop it is about to start.
    mutating func run(events: AsyncStream<ServiceGroup.Event>.Continuation) -> RunAction {
        defer { runCalled = true }
        guard !runCalled else { return .alreadyRun }
        switch phase {
        case .idle:
            phase = .running(events)
            return .runServices
        case .finished:
            return .returnAtOnce
        case .running:
            return .alreadyRun
        }
    }

    /// `shutdown()` was called.
    mutating func shutdown() -> ShutdownAction {
        switch phase {
        case .idle:
            return .resume(finish())
        case .running(let events):
            return .request(events)
        case .finished:
            return .none
        }
    }

    /// Every service was prepared; returns the waiters to resume.
    mutating func started() -> [CheckedContinuation<Void, Never>] {
        startOutcome = startOutcome ?? .success(())
        return startWaiters.releaseAll()
    }

    /// The group stopped before every service was prepared; returns the waiters to resume.
    mutating func startFailed(_ error: any Error) -> [CheckedContinuation<Void, Never>] {
        startOutcome = startOutcome ?? .failure(error)
        return startWaiters.releaseAll()
    }

    /// The event loop returned (every service did); returns the waiters to resume.
    mutating func runEnded() -> [CheckedContinuation<Void, Never>] { finish() }

    private mutating func finish() -> [CheckedContinuation<Void, Never>] {
        phase = .finished
        return startFailed(ServiceGroupError.stoppedBeforeStarted) + endWaiters.releaseAll()
    }
}
