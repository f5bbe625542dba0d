import Foundation

/// The client-side fan-out of one interaction's events: every ``subscribe()`` gets its own stream of everything
/// ``yield(_:)`` sends from then on, and ``onEmpty`` tells the owner when nobody listens any more.
///
/// A subscriber leaves by ending its iteration — cancelling its task, breaking out of the loop, or dropping the
/// stream. Events are buffered per subscriber according to the buffering policy, so a consumer that stops reading
/// without leaving keeps accumulating events under the default `.unbounded` policy.
public final class EventFanOut<Event: Sendable>: Sendable {
    private typealias Continuation = AsyncStream<Event>.Continuation

    private struct State {
        var continuations: [UInt64: Continuation] = [:]
        var nextID: UInt64 = 0
        var isFinished = false
        var retained: Event?
    }

    /// Guards the registered continuations, the id counter, the retained event and whether ``finish()`` has run.
    private let state = Protected(State())
    private let bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy
    private let onEmpty: @Sendable () -> Void

    /// Creates an empty registry.
    ///
    /// `onEmpty` runs, outside the registry's lock, each time a departure leaves no subscriber — typically to close
    /// the SSE connection. It runs again if subscribers come back and leave again, but never because of
    /// ``finish()``: the owner calling `finish()` already knows the stream is over.
    public init(
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded,
        onEmpty: @escaping @Sendable () -> Void = {}
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.onEmpty = onEmpty
    }

    deinit {
        for continuation in state.withLock({ $0.continuations.values }) { continuation.finish() }
    }

    /// A new stream that receives the retained event (see ``yield(_:retain:)``), then every event yielded after
    /// this call; each call returns a distinct stream. After ``finish()`` the stream returned is already finished.
    public func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: bufferingPolicy)
        let id = withState { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        let registered = withState { state in
            guard !state.isFinished else { return false }
            if let retained = state.retained { continuation.yield(retained) }
            state.continuations[id] = continuation
            return true
        }
        if !registered { continuation.finish() }
        return stream
    }

    /// Sends `event` to every current subscriber. All subscribers see concurrent yields in the same order.
    ///
    /// With `retain`, `event` is also kept (replacing any event kept before) and handed first to every later
    /// subscriber — for "the current state", which a subscriber that joins late must not have to wait for.
    public func yield(_ event: Event, retain: Bool = false) {
        withState { state in
            if retain { state.retained = event }
            for continuation in state.continuations.values { continuation.yield(event) }
        }
    }

    /// Sends `event` to every current subscriber and, in the same step, makes `retained` what later subscribers get
    /// first (the state as of `event`, say): a subscriber joins either before, and gets `event`, or after, and gets
    /// `retained`; never between the two, with neither.
    public func yield(_ event: Event, retaining retained: Event) {
        withState { state in
            state.retained = retained
            for continuation in state.continuations.values { continuation.yield(event) }
        }
    }

    /// Replaces the retained event without sending it to anyone: what later subscribers get first from now on.
    public func retain(_ event: Event) {
        withState { $0.retained = event }
    }

    /// Ends every subscriber's stream (their `for await` loops exit after the buffered events) and forgets them.
    /// Later ``subscribe()`` calls get an already-finished stream. Does not call `onEmpty`.
    public func finish() {
        let continuations = withState { state in
            state.isFinished = true
            defer { state.continuations = [:] }
            return state.continuations
        }
        for continuation in continuations.values { continuation.finish() }
    }

    /// Whether ``finish()`` has run: new subscribers get an already-finished stream.
    public var isFinished: Bool {
        withState { $0.isFinished }
    }

    /// How many subscribers are registered now.
    public var count: Int {
        withState { $0.continuations.count }
    }

    private func unsubscribe(_ id: UInt64) {
        let (removed, isEmpty) = withState { state in
            let removed = state.continuations.removeValue(forKey: id)
            return (removed, state.continuations.isEmpty)
        }
        // The removed continuation is released here, outside the lock, whatever its release may run.
        if removed != nil, isEmpty { onEmpty() }
    }

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock(body)
    }
}
