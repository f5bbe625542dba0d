import Coordination

/// Bounds how long one statement waits for the server. At the deadline the statement is cancelled (`PQcancel`,
/// through the connection's canceller); if the server answers nothing within the grace after that — a half-open TCP
/// connection, a blackholed route, where a wait would otherwise last until the kernel gives up, hours later — the
/// pending wait is failed with a `.connection` error, so the connection is discarded and its pool slot freed.
///
/// `stop()` must be called once the exchange is over; it returns whether the deadline passed. The interrupt is sent
/// only while the exchange it was armed for is still running (checked under one lock), so it can never hit the
/// connection's next statement.
final class StatementDeadline: Sendable {
    /// Guards whether the exchange is over (then nothing more is done) and whether the deadline passed.
    private let state = Locked((over: false, passed: false))
    private let timer: Task<Void, Never>?

    init(limit: Duration, grace: Duration, generation: UInt64, connection: PostgresConnection) {
        let state = self.state
        timer = Task { [canceller = connection.canceller, reactor = connection.reactor, socket = connection.socket] in
            do { try await Task.sleep(for: limit) } catch { return }
            guard state.withLock({ state -> Bool in
                if !state.over { state.passed = true }
                return !state.over
            }) else { return }
            canceller.cancel(generation)
            do { try await Task.sleep(for: grace) } catch { return }
            state.withLock { state in
                guard !state.over else { return }
                reactor.interrupt(socket, with: PostgresError(
                    .connection, "no answer from the server within the statement deadline and the cancel's grace"))
            }
        }
    }

    /// Ends the watch; returns whether the deadline passed.
    func stop() -> Bool {
        let passed = state.withLock { state -> Bool in
            state.over = true
            return state.passed
        }
        timer?.cancel()
        return passed
    }
}
