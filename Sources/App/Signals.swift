import Coordination
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The write end of the pipe that caught signals are written to: set before the handler is installed, and read by
/// the handler alone (a plain load: what a signal handler may do).
nonisolated(unsafe) private var caughtSignals: Int32 = -1

/// Catches process signals from the moment it is made, and hands the first one over to whoever waits for it,
/// without blocking any thread that runs tasks.
///
/// A handler of its own writes each signal's number to a pipe (the only thing it does, so it is safe in a signal
/// handler), and a thread reads the pipe. Unlike a dispatch signal source — set up on another thread after it is
/// resumed, while the signal is ignored — nothing can be lost between this initialiser and the first wait. One per
/// process: the last one made receives the signals.
final class SignalTrap: Sendable {
    private struct State {
        var received: Int32?
        var waiters = WaiterList()
    }

    /// Guards the first signal received and who waits for it.
    private let state = Locked(State())
    private let signals: [Int32]
    private let writeEnd: Int32

    /// Starts catching `signals`: from now on they do not stop the process.
    init(catching signals: [Int32]) {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "cannot make the signal pipe: errno \(errno)")
        // Not inherited by the processes this one starts.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        self.signals = signals
        writeEnd = ends[1]
        caughtSignals = ends[1]
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(caughtSignals, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
        let state = self.state, readEnd = ends[0]
        let reader = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { break }
                Self.receive(Int32(byte), in: state)
            }
            close(readEnd)
        }
        reader.name = "switchboard-signals"
        reader.start()
    }

    deinit {
        for number in signals { signal(number, SIG_DFL) }
        close(writeEnd) // the reader sees the end of the pipe and returns
    }

    /// The first signal caught (at once if one came already); nil when the calling task is cancelled first.
    func first() async -> Int32? {
        await state.wait(until: { $0.received != nil }, in: \.waiters)
        return state.withLock { $0.received }
    }

    private static func receive(_ number: Int32, in state: Locked<State>) {
        state.withLock { state in
            state.received = state.received ?? number
            return state.waiters.releaseAll()
        }.resumeAll()
    }
}
