/// The buffers one event accumulates between blank lines: data, event type and the pending last event id.
struct EventFields: Sendable {
    var data = ""
    var type = ""
    /// The id the next dispatched event carries; it is not reset by a dispatch, so ids persist across events.
    var lastEventID: String?

    /// The event the buffers hold, or `nil` when no `data` line arrived; either way data and type are cleared.
    mutating func dispatch() -> ReceivedServerSentEvent? {
        defer {
            data = ""
            type = ""
        }
        guard !data.isEmpty else { return nil }
        data.removeLast()
        return ReceivedServerSentEvent(id: lastEventID, event: type.isEmpty ? "message" : type, data: data)
    }
}
