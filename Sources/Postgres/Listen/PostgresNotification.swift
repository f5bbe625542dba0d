/// One `NOTIFY` (or `pg_notify`) delivered to a connection that listens on its channel.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel it was sent on, exactly as the sender named it.
    public var channel: String
    /// The payload text; empty when the sender gave none. At most 8,000 bytes (the server's limit).
    public var payload: String
    /// The backend process of the sending session. It may be this process's own connection.
    public var senderPID: Int32

    /// Creates a notification value, e.g. for tests of code that consumes them.
    public init(channel: String, payload: String, senderPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderPID = senderPID
    }
}
