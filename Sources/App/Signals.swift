import Dispatch
import Foundation
import Coordination

/// Waits for process signals without blocking any thread.
enum Signals {
    /// Returns the first of `signals` delivered to the process; their default action is disabled.
    static func wait(for signals: [Int32]) async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let waiter = SignalWaiter(continuation)
            for number in signals {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { waiter.fire(number) }
                waiter.keep(source)
                source.resume()
            }
        }
    }
}

/// Resumes its continuation once, for the first signal, and keeps the signal sources alive until then.
private final class SignalWaiter: Sendable {
    /// Guards the continuation (taken by the first signal) and the sources it keeps alive.
    private let state: Locked<(continuation: CheckedContinuation<Int32, Never>?, sources: [any DispatchSourceSignal])>

    init(_ continuation: CheckedContinuation<Int32, Never>) {
        state = Locked((continuation: continuation, sources: []))
    }

    func keep(_ source: any DispatchSourceSignal) {
        state.withLock { $0.sources.append(source) }
    }

    func fire(_ number: Int32) {
        let continuation = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: number)
    }
}
