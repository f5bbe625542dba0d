/// One event dispatched from a `text/event-stream`, as ``EventStreamParser`` produces it.
public struct ReceivedServerSentEvent: Sendable, Equatable {
    /// The stream's last event id when this event was dispatched — set by this event's `id` field or by an earlier
    /// one, since the id persists across events. `nil` until the server sends an id, and again after it sends an
    /// empty `id` field (which resets it); do not read it as "this event had no `id` line".
    public var id: String?
    /// The event type from the `event` field; "message" when the server sent none.
    public var event: String
    /// The `data` lines joined with LF, without a trailing LF. May be empty: a lone `data` line dispatches "".
    public var data: String

    /// Creates an event; `event` defaults to "message", the type a stream without an `event` field carries.
    public init(id: String? = nil, event: String = "message", data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}
