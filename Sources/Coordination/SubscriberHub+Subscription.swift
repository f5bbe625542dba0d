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
        /// last event seen.
        public let stream: AsyncStream<Event>
        /// The mailbox behind ``stream``, for ``whenReady(_:)``.
        @usableFromInline let mailbox: SubscriberMailbox<Event>

        @usableFromInline
        init(id: UInt64, key: Key, stream: AsyncStream<Event>, mailbox: SubscriberMailbox<Event>) {
            self.id = id
            self.key = key
            self.stream = stream
            self.mailbox = mailbox
        }

        /// Calls `wake` once, when ``stream`` has something to give: an event, or its end. At once if it already
        /// has; else on the thread that publishes the first event or ends the subscription. For a consumer that
        /// starts reading only then (an idle subscriber then costs no waiting reader). Call it before iterating.
        @inlinable
        public func whenReady(_ wake: @escaping @Sendable () -> Void) {
            mailbox.whenReady(wake)
        }
    }
}
