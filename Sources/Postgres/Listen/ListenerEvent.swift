/// What a ``PostgresListener`` stream delivers, in order.
public enum ListenerEvent: Sendable, Hashable {
    /// The listener now listens on all its channels; the first event of every stream once that is true.
    /// Load the current state from its source of truth now: nothing sent before this event is delivered.
    case connected
    /// A notification on one of the listener's channels.
    case notification(PostgresNotification)
    /// The connection was lost and is listening again. Notifications sent meanwhile are lost for good:
    /// catch up from the source of truth, as after ``connected``.
    case reconnected
}
