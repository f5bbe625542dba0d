extension SubscriberHub {
    /// One subscriber's registration: the stream to iterate and the id that names it in logs.
    ///
    /// The registration lasts as long as the stream is followed: stopping the iteration, cancelling its task, or
    /// dropping the subscription (and every copy of its stream) without iterating all unregister it.
    public struct Subscription: Sendable {
        /// Unique among the hub's subscriptions, for its whole life.
        public let id: UInt64
        /// The key this subscription follows.
        public let key: Key
        /// The events published to ``key`` after subscribing, in order. It ends when the key is finished, the hub
        /// shuts down, or the subscriber falls `bufferLimit` events behind: then reconnect and replay from the
        /// last event seen. Made when first asked for (see ``SubscriberStreamSource``); the same stream every time.
        @inlinable
        public var stream: AsyncStream<Event> { source.stream }
        /// Where ``stream`` comes from. A class, so a copy of the subscription is a retain (a stream, a type of
        /// another module whose layout is not known here, was copied through its value witnesses).
        @usableFromInline let source: SubscriberStreamSource<Event>
        /// The mailbox behind ``stream``, for ``whenReady(_:)``.
        @usableFromInline let mailbox: SubscriberMailbox<Event>

        @usableFromInline
        init(id: UInt64, key: Key, source: SubscriberStreamSource<Event>, mailbox: SubscriberMailbox<Event>) {
            self.id = id
            self.key = key
            self.source = source
            self.mailbox = mailbox
        }

        /// Whether the subscription has ended (finished, overflowed or cancelled): its `onTermination` has run, or is
        /// about to. One lock, no lookup in the hub's registry.
        @inlinable
        public var hasEnded: Bool { mailbox.isClosed }

        /// Calls `wake` once, when ``stream`` has something to give: an event, or its end. At once if it already
        /// has; else on the thread that publishes the first event or ends the subscription. For a consumer that
        /// starts reading only then (an idle subscriber then costs no waiting reader). Call it before iterating.
        @inlinable
        public func whenReady(_ wake: @escaping @Sendable () -> Void) {
            mailbox.whenReady(wake)
        }
    }
}
