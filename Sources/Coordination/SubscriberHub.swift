/// Fans events out per key to many subscribers, each with its own bounded `AsyncStream`.
///
/// Each stream reads its own ``SubscriberMailbox``; the code that publishes and subscribes is inlinable, so where the
/// hub is used it is specialized for the key and event types (a publish is then a lock and a resume per subscriber).
///
/// For streams that clients follow live, e.g. the events of one customer-support interaction followed over SSE
/// by every phone that has it open. Each ``subscribe(_:bufferLimit:)`` registers one stream; it is forgotten
/// when its consumer stops iterating, drops it or is cancelled, when ``finish(_:)`` ends its key, or when it
/// overflows.
///
/// Overflow: a stream buffers at most `bufferLimit` unread events (`.bufferingOldest`); the publish that finds
/// the buffer full finishes the stream instead of dropping anything silently. The consumer still reads every
/// buffered event, in order and with no gap, then sees the end and reconnects with the id of the last one; the
/// event log replays the rest. (`.bufferingNewest` would keep the latest events instead, leaving a gap before
/// them that a client's last event id could not reveal.) So the mistake to avoid is treating the end of a stream
/// as "the interaction is over": it may only mean "you fell behind, reconnect".
///
/// Events published from one task arrive in that order at every subscriber. Concurrent publishes to one key are
/// not ordered with each other, and two subscribers may see them in different orders: publish from a single
/// task (e.g. the one dispatching the event log's notifications) where order matters.
public final class SubscriberHub<Key: Hashable & Sendable, Event: Sendable>: Sendable {
    /// Guards the registry. Never held while calling into a stream: `finish()` runs termination handlers, which
    /// take this lock themselves.
    @usableFromInline let registry = Locked(SubscriberRegistry<Key, Event>())

    /// Creates a hub with no subscribers.
    public init() {}

    deinit {
        // Nobody can publish any more: end the streams so their consumers don't wait forever. The termination
        // handlers hold the hub weakly and do nothing now.
        for subscribers in registry.withLock({ $0.removeAll() }).values {
            for mailbox in subscribers.values { mailbox.finish() }
        }
    }

    /// Registers a new subscriber of `key` and returns its stream, which receives the events published to `key`
    /// from now on.
    ///
    /// - Parameter bufferLimit: how many unread events the stream holds before it is finished for falling behind
    ///   (see the type's discussion); at least 1.
    /// - Parameter onTermination: called once when the stream ends, however it ends (consumer gone, finished,
    ///   overflowed, dropped unread), with the subscription's id — for bookkeeping kept beside the hub.
    /// - Returns: a subscription whose stream is already finished if ``finishAll()`` has run.
    @inlinable
    public func subscribe(_ key: Key, bufferLimit: Int,
                          onTermination: (@Sendable (UInt64) -> Void)? = nil) -> Subscription {
        precondition(bufferLimit > 0, "bufferLimit must be at least 1, got \(bufferLimit)")
        let id = registry.withLock { $0.nextID() }
        let mailbox = SubscriberMailbox<Event>(limit: bufferLimit) { [weak self] in
            self?.forget(id, of: key)
            onTermination?(id)
        }
        // The source holds the reader until its stream is made, then the stream's closures do: the subscription
        // dropped unread (its stream made or not) cancels the mailbox.
        let source = SubscriberStreamSource(SubscriberMailboxReader(mailbox))
        let added = registry.withLock { $0.add(mailbox, id: id, for: key) }
        if !added { mailbox.finish() }
        return Subscription(id: id, key: key, source: source, mailbox: mailbox)
    }

    /// Yields `event` to every subscriber of every key (a heartbeat, say); one call instead of a timer each.
    @inlinable
    public func publishToAll(_ event: Event) {
        publishToAll(event) { _ in true }
    }

    /// Yields `event` to the subscribers of every key that belong to `slice` of `schedule` (see `HeartbeatSchedule`).
    @inlinable
    public func publishToAll(_ event: Event, slice: Int, of schedule: HeartbeatSchedule) {
        publishToAll(event) { schedule.contains($0, slice: slice) }
    }

    /// Yields `event` to the subscribers of every key whose id `chosen` takes; a full buffer finishes the stream.
    @inlinable
    func publishToAll(_ event: Event, where chosen: (UInt64) -> Bool) {
        let everyone = registry.withLock { $0.everyone }
        for subscribers in everyone.values {
            for (id, mailbox) in subscribers where chosen(id) {
                if case .dropped = mailbox.yield(event) { mailbox.finish() }
            }
        }
    }

    /// Delivers `event` to every current subscriber of `key`; returns at once, without waiting for any consumer.
    ///
    /// A subscriber whose buffer is full is finished and forgotten instead. Publishing to a key nobody follows
    /// does nothing.
    @inlinable
    public func publish(_ event: Event, to key: Key) {
        let subscribers = registry.withLock { $0.subscribers(of: key) }
        for mailbox in subscribers.values {
            if case .dropped = mailbox.yield(event) {
                mailbox.finish()  // its termination handler forgets it
            }
        }
    }

    /// Delivers `event` to one subscriber of `key` only (one whose credentials ran out, say), if it is still there;
    /// like ``publish(_:to:)``, a full buffer finishes the stream instead.
    @inlinable
    public func publish(_ event: Event, to key: Key, subscriber id: UInt64) {
        guard let mailbox = registry.withLock({ $0.subscribers(of: key)[id] }) else { return }
        if case .dropped = mailbox.yield(event) { mailbox.finish() }
    }

    /// Whether subscription `id` still follows `key` (it has not ended).
    @inlinable
    public func isSubscribed(_ id: UInt64, to key: Key) -> Bool {
        registry.withLock { $0.subscribers(of: key)[id] != nil }
    }

    /// The keys that have at least one subscriber now.
    public var keys: [Key] {
        registry.withLock { Array($0.everyone.keys) }
    }

    /// Finishes every stream of `key` and forgets them, e.g. when the interaction has ended. Consumers still read
    /// what their streams had buffered, then see the end.
    ///
    /// A later ``subscribe(_:bufferLimit:)`` to `key` registers normally: refusing latecomers is the caller's job.
    @inlinable
    public func finish(_ key: Key) {
        let subscribers = registry.withLock { $0.removeAll(for: key) }
        for mailbox in subscribers.values { mailbox.finish() }
    }

    /// Finishes every stream and closes the hub, for shutdown: later subscriptions get streams that are already
    /// finished.
    @inlinable
    public func finishAll() {
        let everyone = registry.withLock { $0.removeAll() }
        for subscribers in everyone.values {
            for mailbox in subscribers.values { mailbox.finish() }
        }
    }

    /// How many subscribers the hub holds, over all keys.
    public var subscriberCount: Int {
        registry.withLock { $0.count }
    }

    /// How many subscribers follow `key`.
    public func subscriberCount(for key: Key) -> Int {
        registry.withLock { $0.count(for: key) }
    }

    /// Forgets a subscriber whose stream has terminated; releases its mailbox after unlocking.
    @inlinable
    func forget(_ id: UInt64, of key: Key) {
        _ = registry.withLock { $0.remove(id, from: key) }
    }
}
