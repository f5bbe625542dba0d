import Coordination

/// Bounds how long one statement waits for the server. At the deadline the statement is cancelled (`PQcancel`,
/// through the connection's canceller); if the server answers nothing within the grace after that — a half-open TCP
/// connection, a blackholed route, where a wait would otherwise last until the kernel gives up, hours later — the
/// pending wait is failed with a `.connection` error, so the connection is discarded and its pool slot freed.
///
/// One per connection, watching each statement in turn: ``begin(_:)`` when it is sent, ``stop()`` once its exchange
/// is over (it returns whether the deadline passed). Both stages are timers of the connection's ``SocketReactor`` (no
/// task or thread per statement), and the first stage's action is made once, with the watch: a statement that ends in
/// time (nearly all) costs a timer scheduled and cancelled, and no allocation. A timer that fires for a statement
/// already over — its cancellation raced with the firing — finds the next statement's deadline not yet come (or no
/// statement at all) and does nothing; the interrupt is sent only while the exchange it was armed for is still running
/// (checked under one lock), so it can never hit the next statement.
final class StatementDeadline: Sendable {
    struct State {
        /// The statement watched now, if any.
        var generation: UInt64 = 0
        var over = true
        var passed = false
        /// When the watched statement's deadline comes.
        var due = ContinuousClock.Instant.now
        var ticket: UInt64 = 0
    }

    /// Guards the statement watched, whether it is over and whether its deadline passed, and the pending timer ticket.
    private let state = Locked(State())
    /// Runs the timers.
    private let reactor: SocketReactor
    /// How long a statement may take.
    let limit: Duration
    /// The first stage, run by the reactor at a statement's deadline: made once, with the watch.
    private let atDeadline: @Sendable () -> Void

    /// A watch for the statements of the connection on `socket`, cancelled through `canceller`.
    init(limit: Duration, grace: Duration, canceller: QueryCanceller, reactor: SocketReactor, socket: Int32) {
        let state = self.state
        self.reactor = reactor
        self.limit = limit
        atDeadline = {
            let cancel = state.withLock { current -> UInt64? in
                guard !current.over, !current.passed, ContinuousClock.now >= current.due else { return nil }
                current.passed = true
                // Repeated each second until the exchange is over: a wait that is not armed at that instant (between
                // two reads of a trickling reply) would otherwise miss it.
                let interrupt = Interrupt(state: state, reactor: reactor, socket: socket, generation: current.generation)
                current.ticket = reactor.schedule(after: grace, interrupt.fire)
                return current.generation
            }
            if let cancel { canceller.cancel(cancel) }
        }
    }

    /// Starts watching statement `generation`, sent just now. The timer is scheduled under the watch's lock (the
    /// order its actions take the two locks in too), so it cannot fire before its ticket is recorded.
    func begin(_ generation: UInt64) {
        let due = ContinuousClock.now + limit
        state.withLock { state in
            state = State(generation: generation, over: false, passed: false, due: due,
                          ticket: reactor.schedule(at: due, atDeadline))
        }
    }

    /// Ends the watch of the current statement; returns whether its deadline passed.
    func stop() -> Bool {
        let (passed, ticket) = state.withLock { state -> (Bool, UInt64) in
            state.over = true
            return (state.passed, state.ticket)
        }
        reactor.cancel(ticket)
        return passed
    }
}

/// The last resort of a deadline: fails the statement's pending wait, again each second until the exchange is over.
private struct Interrupt: Sendable {
    let state: Locked<StatementDeadline.State>
    let reactor: SocketReactor
    let socket: Int32
    let generation: UInt64

    func fire() {
        state.withLock { state in
            guard !state.over, state.generation == generation else { return }
            reactor.interrupt(socket, with: PostgresError(
                .connection, "no answer from the server within the statement deadline and the cancel's grace"))
            state.ticket = reactor.schedule(after: .seconds(1), fire)
        }
    }
}
