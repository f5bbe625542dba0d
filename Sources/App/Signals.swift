import Dispatch
import Foundation
import Coordination

/// Catches process signals from the moment it is made (their default action is disabled then), and hands over the
/// first one to whoever waits for it, without blocking any thread.
final class SignalTrap: Sendable {
    private struct State {
        var received: Int32?
        var waiters = WaiterList()
    }

    /// Guards the first signal received and who waits for it.
    private let state: Locked<State>
    /// Guards the signal sources, kept alive until `deinit`.
    private let sources: Locked<[any DispatchSourceSignal]>

    /// Starts catching `signals`: from now on they do not stop the process.
    init(catching signals: [Int32]) {
        let state = Locked(State())
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { Self.receive(number, in: state) }
            source.resume()
            sources.append(source)
        }
        self.state = state
        self.sources = Locked(sources)
    }

    deinit {
        sources.withLock { sources in
            for source in sources { source.cancel() }
        }
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
