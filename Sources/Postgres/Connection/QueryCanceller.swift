import Coordination
import CLibPQ
import Foundation

/// Sends cancel requests for one connection's running query, each on its own thread.
///
/// `PQcancel` opens a new connection to the server and blocks until the request is delivered, so it must never run
/// on Swift's cooperative pool. Queries are numbered: a cancel is sent only while the query it was meant for runs,
/// and ``finish(_:)`` waits for a cancel in flight, so a late cancel cannot hit the connection's next query.
/// A backend ignores a cancel that arrives before it starts executing, so the request is repeated, with growing
/// pauses, for as long as the query runs.
final class QueryCanceller: Sendable {
    /// A `PGcancel` pointer that can cross to the cancel thread.
    /// `@unchecked Sendable`: it is used while `inFlight` is set and freed only once `inFlight` is clear.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State {
        var handle: Handle?
        var activeGeneration: UInt64?
        var cancelledGeneration: UInt64?
        var inFlight = false
        var isClosed = false
        var finishWaiter: CheckedContinuation<Void, Never>?
    }

    /// Guards the `PGcancel` handle (nil once freed), the running query's generation, and the cancel in flight.
    private let state: Locked<State>
    /// Cuts the cancel thread's pause between repeats short once the query is finished.
    private let queryFinished = DispatchSemaphore(value: 0)
    /// Milliseconds between repeated cancel requests for one query.
    private static let repeatPauses = [50, 100, 250, 500, 1000, 1000, 1000, 1000, 1000, 1000]

    /// Takes a cancel handle for `connection` (libpq copies what it needs; the handle outlives `PQfinish`).
    init(connection: OpaquePointer) {
        state = Locked(State(handle: PQgetCancel(connection).map(Handle.init)))
    }

    deinit {
        if let handle = state.withLock({ $0.handle }) { PQfreeCancel(handle.pointer) }
    }

    /// Marks query `generation` as running, so ``cancel(_:)`` may act on it.
    func begin(_ generation: UInt64) {
        state.withLock { $0.activeGeneration = generation }
    }

    /// Asks the server to cancel query `generation` if it still runs; returns at once, from any thread.
    func cancel(_ generation: UInt64) {
        let start = state.withLock { state in
            guard state.activeGeneration == generation, state.cancelledGeneration != generation,
                  state.handle != nil, !state.inFlight
            else { return false }
            state.cancelledGeneration = generation
            state.inFlight = true
            return true
        }
        guard start else { return }
        let thread = Thread { self.send(generation) }
        thread.name = "postgres-cancel"
        thread.start()
    }

    /// Marks query `generation` as done and returns whether a cancel was requested for it, unless a cancel is still in
    /// flight: then nothing changes and nil says to ``finish(_:)`` (which waits for it). Every query ends here, and
    /// nearly all have nothing in flight: no async call for them.
    func finishUnlessInFlight(_ generation: UInt64) -> Bool? {
        state.withLock { state in
            guard !state.inFlight else { return nil }
            state.activeGeneration = nil
            return state.cancelledGeneration == generation
        }
    }

    /// Marks query `generation` as done, waiting for a cancel still in flight; returns whether one was requested.
    func finish(_ generation: UInt64) async -> Bool {
        let (requested, inFlight) = state.withLock { state in
            state.activeGeneration = nil
            return (state.cancelledGeneration == generation, state.inFlight)
        }
        if inFlight {
            queryFinished.signal()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    guard state.inFlight else { return true }
                    state.finishWaiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        return requested
    }

    /// Marks query `generation` as done without waiting for a cancel in flight (whose `PQcancel` may be stuck on a
    /// dead network for minutes): only for a connection being discarded, which runs no next query a late cancel
    /// could hit. Returns whether a cancel was requested.
    func abandon(_ generation: UInt64) -> Bool {
        let requested = state.withLock { state in
            state.activeGeneration = nil
            return state.cancelledGeneration == generation
        }
        queryFinished.signal()
        return requested
    }

    /// Frees the handle now, or when the cancel in flight completes. Idempotent.
    func close() {
        let handle = state.withLock { state -> Handle? in
            state.isClosed = true
            guard !state.inFlight else { return nil }
            defer { state.handle = nil }
            return state.handle
        }
        if let handle { PQfreeCancel(handle.pointer) }
    }

    /// Runs on the cancel thread.
    private func send(_ generation: UInt64) {
        // Forget signals left over from an earlier query; only this query's finish may cut a pause short.
        while queryFinished.wait(timeout: .now()) == .success {}
        var pauses = Self.repeatPauses[...]
        while let handle = state.withLock({ $0.activeGeneration == generation ? $0.handle : nil }) {
            var errorBuffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(handle.pointer, &errorBuffer, Int32(errorBuffer.count))
            guard let pause = pauses.popFirst() else { break }
            _ = queryFinished.wait(timeout: .now() + .milliseconds(pause))
        }
        let (waiter, freed) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Handle?) in
            state.inFlight = false
            defer { state.finishWaiter = nil }
            guard state.isClosed else { return (state.finishWaiter, nil) }
            defer { state.handle = nil }
            return (state.finishWaiter, state.handle)
        }
        if let freed { PQfreeCancel(freed.pointer) }
        waiter?.resume()
    }
}
