/// What a ``PostgresListener``'s inline observer sees, on the listener's own task, as soon as it happens and
/// before any stream does.
public enum ListenerInlineEvent: Sendable {
    /// The listener now listens on every channel. `afterGap` when it had lost a connection before: notices sent
    /// meanwhile are lost for good, so whatever they would have invalidated must be invalidated now.
    case listening(afterGap: Bool)
    /// Notifications just read, in order.
    case notifications([PostgresNotification])
    /// The connection was lost; nothing is heard until the next `.listening`.
    case notListening
}
