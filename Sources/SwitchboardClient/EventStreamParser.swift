/// An incremental parser of `text/event-stream` bytes, following the WHATWG HTML "event stream interpretation".
///
/// Feed it chunks exactly as they arrive — a chunk may end anywhere, even between the CR and LF of one line ending
/// or inside a UTF-8 sequence. One parser follows one logical stream: keep it across reconnects so ``lastEventID``
/// and ``retry`` persist, and call ``finish()`` when a connection ends, or the cut-off event's half-read fields
/// leak into the first event of the next connection.
public struct EventStreamParser: Sendable {
    /// The reconnection delay in milliseconds from the most recent valid `retry` field; `nil` until one arrives.
    /// A `retry` value that is not all ASCII digits is ignored and leaves this unchanged.
    public private(set) var retry: Int?
    /// The last event id committed by a blank line: what to send as `Last-Event-ID` when reconnecting.
    /// `nil` until the server sends an id and after it sends an empty one.
    public private(set) var lastEventID: String?

    private var lines = LineSplitter()
    private var fields = EventFields()

    /// Creates a parser at the start of a stream; pass the id a previous session ended with to carry it over.
    public init(lastEventID: String? = nil) {
        self.lastEventID = lastEventID
        self.fields.lastEventID = lastEventID
    }

    /// Consumes `bytes` and returns the events they complete, in stream order.
    /// Bytes after the last line ending are kept until a later chunk ends their line.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ReceivedServerSentEvent] {
        var events: [ReceivedServerSentEvent] = []
        // Moved out while splitting, as `process` mutates self; the placeholder holds no buffer, so nothing is copied.
        var splitter = lines
        lines = LineSplitter()
        splitter.split(bytes) { line in
            if let event = process(line) { events.append(event) }
        }
        lines = splitter
        return events
    }

    /// Ends the current connection's stream: an unterminated line and an event without its closing blank line are
    /// discarded, as the standard requires. ``lastEventID`` and ``retry`` keep their values for the next connection.
    public mutating func finish() {
        lines = LineSplitter()
        fields = EventFields()
        fields.lastEventID = lastEventID
    }

    private mutating func process(_ line: String) -> ReceivedServerSentEvent? {
        if line.isEmpty {
            lastEventID = fields.lastEventID
            return fields.dispatch()
        }
        if line.unicodeScalars.first == ":" { return nil }
        let (name, value) = Self.field(in: line)
        switch name {
        case "data": fields.data.append(value + "\n")
        case "event": fields.type = value
        case "id" where !value.unicodeScalars.contains("\0"): fields.lastEventID = value.isEmpty ? nil : value
        case "retry": if let milliseconds = Self.digitsOnly(value) { retry = milliseconds }
        default: break
        }
        return nil
    }

    /// Splits a non-empty, non-comment line into its field name and value, dropping one space after the colon.
    /// Works on scalars, not characters: a combining mark after the colon or space must not hide it.
    private static func field(in line: String) -> (name: String, value: String) {
        let scalars = line.unicodeScalars
        guard let colon = scalars.firstIndex(of: ":") else { return (line, "") }
        var start = scalars.index(after: colon)
        if start < scalars.endIndex, scalars[start] == " " { start = scalars.index(after: start) }
        return (String(scalars[..<colon]), String(scalars[start...]))
    }

    /// The value as an integer if it is one or more ASCII digits and fits in an `Int`.
    private static func digitsOnly(_ value: String) -> Int? {
        guard !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(value)
    }
}
