/// One event of a `text/event-stream` response, in the WHATWG HTML "server-sent events" wire format.
///
/// Any string is safe to put in any field: ``encoded()`` writes the data as one `data:` line per line of it, so a
/// client reassembles it with every line break as LF (CRLF and lone CR included), and it sanitises ``id`` and
/// ``event``, which the format cannot carry over more than one line. The one thing a caller could get wrong is
/// expecting CR or CRLF in the data to survive: the format itself turns every line break into LF.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event id a reconnecting client sends back as `Last-Event-ID`; nil writes no `id:` line, so the client
    /// keeps the id it had. Encoded with CR and LF replaced by spaces and NUL removed, since a client would cut the
    /// value at a line break and ignore an id containing NUL.
    public var id: String?
    /// The event type, which browsers dispatch to `addEventListener(type, …)`; nil (or empty) means "message".
    /// Encoded with CR and LF replaced by spaces.
    public var event: String?
    /// The payload; may contain any characters, including line breaks (which arrive as LF). Empty data still
    /// dispatches an event with empty data.
    public var data: String
    /// The reconnection delay, in milliseconds, the client should use from now on; nil or negative writes no
    /// `retry:` line (the format only accepts digits).
    public var retry: Int?

    /// Creates an event; no value is rejected, see ``encoded()`` for how each field is written.
    public init(id: String? = nil, event: String? = nil, data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// The event as UTF-8 bytes, ending with the blank line that makes the client dispatch it.
    ///
    /// Writes `id:`, `event:` and `retry:` lines when present, then one `data:` line per line of ``data``. Each
    /// value follows its colon after exactly one space, which is the one space a client strips, so a value that
    /// itself starts with a space keeps it.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.utf8.count + (id?.utf8.count ?? 0) + (event?.utf8.count ?? 0) + 32)
        if let id {
            Self.appendField("id", id.utf8.lazy.filter { $0 != ASCII.nul }, to: &bytes)
        }
        if let event {
            Self.appendField("event", event.utf8, to: &bytes)
        }
        if let retry, retry >= 0 {
            Self.appendField("retry", String(retry).utf8, to: &bytes)
        }
        Self.appendLines(of: data, field: "data", to: &bytes)
        bytes.append(ASCII.lf)
        return bytes
    }

    /// A comment block, e.g. a heartbeat that keeps proxies from closing an idle stream: `: text`, then a blank
    /// line. Clients ignore it. A multi-line `text` becomes one comment line per line, so it cannot inject fields.
    public static func comment(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 4)
        appendLines(of: text, field: "", to: &bytes)
        bytes.append(ASCII.lf)
        return bytes
    }
}
