/// One subscriber's events on their way to its one consumer: a bounded queue behind the subscriber's `AsyncStream`.
///
/// It does what `AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(limit))` does for ``SubscriberHub``, with a
/// queue and a waiting reader of the hub's own, so a publish to ten thousand subscribers does not run the standard
/// library's generic buffer code (and its metadata lookups) ten thousand times. The hub's code that touches it is
/// inlinable, so it is specialized for the event type where the hub is used.
///
/// - ``yield(_:)`` hands an event to a waiting reader, or queues it; a full queue refuses it (`.dropped`), and the
///   hub then finishes the stream.
/// - ``finish()``: the reader still gets what was queued, then the end.
/// - ``cancel()`` (the consumer's task was cancelled, or its stream dropped): the queue is emptied and the reader
///   ends at once.
/// - `onTermination` runs exactly once, at the first of the two.
/// - ``whenReady(_:)``: for a consumer that starts reading only once there is something to read (a stream whose
///   producer is not started while it has nothing to send), called once, at the first event or the close.
@usableFromInline
final class SubscriberMailbox<Event: Sendable>: Sendable {
    /// The queue and the reader waiting on it, only touched under ``state``'s lock.
    @usableFromInline
    struct State {
        /// Events from `head` on are queued; those before it were read and go at the next compaction.
        @usableFromInline var events: [Event] = []
        @usableFromInline var head = 0
        /// The reader, suspended while the queue is empty (so it is set only when nothing is queued).
        @usableFromInline var reader: UnsafeContinuation<Event?, Never>?
        /// Finished or cancelled: no event is taken any more.
        @usableFromInline var closed = false
        /// Called once, outside the lock, by the first yield or close after it was set (see `whenReady`).
        @usableFromInline var waker: (@Sendable () -> Void)?

        @usableFromInline init() {}

        /// The first queued event, taken off the queue.
        @inlinable
        mutating func take() -> Event? {
            guard head < events.count else { return nil }
            let event = events[head]
            head += 1
            if head == events.count {
                events.removeAll(keepingCapacity: true)
                head = 0
            }
            return event
        }

        /// Queues `event`, first dropping the read events once they are half the array (amortized O(1) per event,
        /// and the array stays within twice the queue's limit).
        @inlinable
        mutating func enqueue(_ event: Event) {
            if head > 0 && head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
            events.append(event)
        }
    }

    /// What became of a yielded event.
    @usableFromInline
    enum Delivery {
        /// Handed to the reader or queued.
        case enqueued
        /// Refused: the queue was full.
        case dropped
        /// Refused: the mailbox is finished or cancelled.
        case closed
    }

    /// What a read found.
    @usableFromInline
    enum Read {
        case event(Event)
        case end
        case wait
    }

    /// Guards the queue, the waiting reader and whether the mailbox is closed.
    @usableFromInline let state = Locked(State())
    /// Most events queued at once.
    @usableFromInline let limit: Int
    /// Run once, outside `state`'s lock, by the call that closes the mailbox first.
    @usableFromInline let onTermination: @Sendable () -> Void

    @usableFromInline
    init(limit: Int, onTermination: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.onTermination = onTermination
    }

    /// Hands `event` to the waiting reader or queues it.
    @inlinable
    func yield(_ event: Event) -> Delivery {
        let (delivery, reader, waker) = state.withLock { state -> (Delivery, UnsafeContinuation<Event?, Never>?, (@Sendable () -> Void)?) in
            if state.closed { return (.closed, nil, nil) }
            if let reader = state.reader {
                state.reader = nil
                return (.enqueued, reader, nil)
            }
            if state.events.count - state.head >= limit { return (.dropped, nil, nil) }
            state.enqueue(event)
            return (.enqueued, nil, state.waker.take())
        }
        reader?.resume(returning: event)
        waker?()
        return delivery
    }

    /// Calls `wake` once, when there is something to read: at once if an event is queued or the mailbox is closed,
    /// else at the first event or the close (on the thread that brings it, outside the lock). For a consumer that
    /// does not read before then; a later call replaces a waker not called yet.
    @inlinable
    func whenReady(_ wake: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.closed || state.head < state.events.count { return true }
            state.waker = wake
            return false
        }
        if now { wake() }
    }

    /// Whether the mailbox is finished or cancelled (its `onTermination` has run, or is about to).
    @inlinable
    var isClosed: Bool {
        state.withLock { $0.closed }
    }

    /// The next event, waiting for one while none is queued; nil once the mailbox is closed and drained.
    /// One reader at a time (the subscriber's stream has one consumer).
    @inlinable
    func next() async -> Event? {
        switch state.withLock({ Self.read(&$0) }) {
        case .event(let event): return event
        case .end: return nil
        case .wait: break
        }
        return await withUnsafeContinuation { (reader: UnsafeContinuation<Event?, Never>) in
            let found = state.withLock { state -> Read in
                let found = Self.read(&state)
                if case .wait = found { state.reader = reader }
                return found
            }
            switch found {
            case .event(let event): reader.resume(returning: event)
            case .end: reader.resume(returning: nil)
            case .wait: break
            }
        }
    }

    @inlinable
    static func read(_ state: inout State) -> Read {
        if let event = state.take() { return .event(event) }
        return state.closed ? .end : .wait
    }

    /// No more events: the reader gets what is queued, then the end.
    @inlinable
    func finish() {
        close(discarding: false)
    }

    /// The consumer is gone: the queue is dropped and a waiting reader ends now.
    @inlinable
    func cancel() {
        close(discarding: true)
    }

    /// Closes the mailbox (once; later calls change nothing), keeping its queue for the reader unless `discarding`.
    /// Inlinable like the rest, so that where the hub is used it runs without looking up the generic types it holds.
    @inlinable
    func close(discarding: Bool) {
        let (reader, waker, first, _) = state.withLock {
            state -> (UnsafeContinuation<Event?, Never>?, (@Sendable () -> Void)?, Bool, [Event]) in
            let first = !state.closed
            state.closed = true
            defer { state.reader = nil }
            let waker = state.waker.take()
            guard discarding else { return (state.reader, waker, first, []) }
            defer { state.events = []; state.head = 0 }
            return (state.reader, waker, first, state.events)  // the events are released after unlocking
        }
        reader?.resume(returning: nil)
        waker?()
        if first { onTermination() }
    }
}

/// Held only by a subscriber's stream: when the stream and every copy of it are gone, nobody can read the mailbox
/// any more, so it is cancelled (and the hub forgets the subscriber).
@usableFromInline
final class SubscriberMailboxReader<Event: Sendable>: Sendable {
    @usableFromInline let mailbox: SubscriberMailbox<Event>
    /// `mailbox.cancel()` as made where the hub is specialized: a deinit is generic code, which would otherwise look
    /// up the mailbox's generic types at run time for every stream that ends.
    @usableFromInline let cancelMailbox: @Sendable () -> Void

    @inlinable
    init(_ mailbox: SubscriberMailbox<Event>) {
        self.mailbox = mailbox
        cancelMailbox = { mailbox.cancel() }
    }

    deinit {
        cancelMailbox()
    }
}
