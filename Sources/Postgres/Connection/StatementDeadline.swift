import Coordination

/// Bounds how long one statement waits for the server. At the deadline the statement is cancelled (`PQcancel`,
/// through the connection's canceller); if the server answers nothing within the grace after that — a half-open TCP
/// connection, a blackholed route, where a wait would otherwise last until the kernel gives up, hours later — the
/// pending wait is failed with a `.connection` error, so the connection is discarded and its pool slot freed.
///
/// Both stages are timers of the connection's ``SocketReactor`` (no task or thread per statement). `stop()` must be
/// called once the exchange is over; it returns whether the deadline passed. The interrupt is sent only while the
/// exchange it was armed for is still running (checked under one lock), so it can never hit the next statement.
final class StatementDeadline: Sendable {
    struct State {
        var over = false
        var passed = false
        var ticket: UInt64 = 0
    }

    /// Guards whether the exchange is over, whether the deadline passed, and the pending timer ticket.
    private let state = Locked(State())
    /// Runs the timers.
    private let reactor: SocketReactor

    init(limit: Duration, grace: Duration, generation: UInt64, connection: PostgresConnection) {
        let state = self.state
        let canceller = connection.canceller, reactor = connection.reactor, socket = connection.socket
        self.reactor = reactor
        // Repeated each second until the exchange is over: a wait that is not armed at that instant (between two
        // reads of a trickling reply) would otherwise miss it.
        let interrupt = Interrupt(state: state, reactor: reactor, socket: socket)
        let ticket = reactor.schedule(after: limit) {
            let cancel = state.withLock { state -> Bool in
                guard !state.over else { return false }
                state.passed = true
                state.ticket = reactor.schedule(after: grace, interrupt.fire)
                return true
            }
            if cancel { canceller.cancel(generation) }
        }
        state.withLock { if $0.ticket == 0 { $0.ticket = ticket } }  // unless the deadline already fired
    }

    /// Ends the watch; returns whether the deadline passed.
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

    func fire() {
        state.withLock { state in
            guard !state.over else { return }
            reactor.interrupt(socket, with: PostgresError(
                .connection, "no answer from the server within the statement deadline and the cancel's grace"))
            state.ticket = reactor.schedule(after: .seconds(1), fire)
        }
    }
}
