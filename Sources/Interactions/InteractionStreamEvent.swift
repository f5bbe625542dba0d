import HTTPServer

/// One event as subscribers receive it: stored events carry their `seq` (the SSE `id`); typing does not.
public struct InteractionStreamEvent: Sendable, Equatable {
    /// What an event on a stream is: a logged event's kind, an ephemeral one, or the keep-alive.
    public enum Kind: Sendable, Equatable {
        /// An event of the interaction's log (it has a `seq`).
        case logged(InteractionStore.Kind)
        /// Someone started or stopped typing (not stored).
        case typing
        /// An erasure redacted events already sent: their ids (not stored, so it may follow the final event).
        case redacted
        /// The stream's last event: the client should reconnect (shutdown, credentials ended).
        case reconnect
        /// Not an event: a keep-alive the stream writes as a comment, so dead subscribers are noticed.
        case heartbeat

        /// The SSE `event` field; nil for the heartbeat, which is written as a comment.
        public var eventName: String? {
            switch self {
            case .logged(let kind): kind.rawValue
            case .typing: "typing"
            case .redacted: "redacted"
            case .reconnect: "reconnect"
            case .heartbeat: nil
            }
        }
    }

    /// The event's place in the interaction's log; nil for ephemeral events (typing).
    public let seq: Int64?
    /// What it is (its SSE `event`).
    public let kind: Kind
    /// The JSON data.
    public let data: String
    /// Whether this is the stream's last event (the interaction is over, or the client must reconnect).
    public let terminal: Bool
    /// The event as a stream writes it (a comment for the heartbeat): encoded once, when the event is made, and
    /// shared by every stream it goes to (an array is copied on write, so 10,000 subscribers hold one buffer).
    let encoded: [UInt8]

    init(seq: Int64?, kind: Kind, data: String, terminal: Bool) {
        self.seq = seq
        self.kind = kind
        self.data = data
        self.terminal = terminal
        encoded = kind.eventName.map { ServerSentEvent(id: seq.map(String.init), event: $0, data: data).encoded() }
            ?? ServerSentEvent.comment("heartbeat")
    }

    /// The keep-alive, written as a comment.
    static let heartbeat = InteractionStreamEvent(seq: nil, kind: .heartbeat, data: "", terminal: false)

    /// Whether this is the keep-alive.
    var isHeartbeat: Bool { kind == .heartbeat }

    /// The last event of a stream whose session was revoked or expired (or of every stream at shutdown): a
    /// `reconnect` event with the reason, after which the client resumes from its last id (with a fresh token).
    static func reconnect(_ reason: ReconnectReason) -> InteractionStreamEvent {
        InteractionStreamEvent(seq: nil, kind: .reconnect, data: #"{"reason":"\#(reason.rawValue)"}"#, terminal: true)
    }

    /// Why a stream asks its client to reconnect (the `reason` of its `reconnect` event).
    enum ReconnectReason: String, Sendable, CaseIterable {
        /// This process is shutting down; another replica will serve the stream.
        case shutdown
        /// The session's token expired.
        case sessionExpired = "session_expired"
        /// The session was revoked.
        case sessionRevoked = "session_revoked"
    }
}
