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

        @usableFromInline
        init(id: UInt64, key: Key, stream: AsyncStream<Event>) {
            self.id = id
            self.key = key
            self.stream = stream
        }
    }
}
