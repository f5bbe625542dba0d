/// Where a new event stream starts in the interaction's log.
public enum EventStreamStart: Sendable, Equatable {
    /// The whole log, then live: the first `state` event, every message and media change since, then what comes.
    /// Nothing written before the stream connected is missed, so this is the default.
    case beginning
    /// A snapshot of the current state, then live. Messages stored before the snapshot are not delivered: load them
    /// with ``SwitchboardClient/messages(in:limit:cursor:)`` if the screen needs them.
    case latest
    /// The events after `seq` (the `seq` of the last event the app already holds), then live.
    case after(Int64)

    /// The `Last-Event-ID` the first connection sends.
    var lastEventID: String? {
        switch self {
        case .beginning: return "0"
        case .latest: return nil
        case .after(let seq): return String(max(0, seq))
        }
    }
}
