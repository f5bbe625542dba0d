import Foundation

/// One parsed server-sent event.
struct ReceivedEvent: Sendable, Equatable {
    var id: String?
    var event: String
    var data: String
}

/// Follows `GET …/events` over a raw socket: reads the body (chunk-encoded, or delimited by the connection's end, as
/// the event-stream daemon sends it) and parses the event stream per WHATWG (fields, multi-line data joined with LF,
/// comments ignored). Blocking: use from `onThread`.
final class EventStreamClient: @unchecked Sendable { // used by one thread at a time
    let socket: RawSocket
    private(set) var status = 0
    private var raw: [UInt8] = []        // bytes after the head, still chunk-encoded when `chunked`
    /// The body is chunk-encoded (else it is plain bytes that end with the connection).
    private(set) var chunked = false
    private var text: [UInt8] = []       // decoded body not yet parsed
    private(set) var ended = false
    private(set) var retry: Int?

    /// Opens the stream; `extraHeaders` (complete lines, each ending in CRLF) go after the usual ones.
    init(port: Int, path: String, token: String, lastEventID: String? = nil, extraHeaders: String = "") throws {
        socket = try RawSocket(port: port)
        var head = "GET \(path) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        try socket.send(head + extraHeaders + "\r\n")
        var buffer: [UInt8] = []
        var end: Int?
        while end == nil {
            try socket.fill(&buffer, timeout: 10)
            end = RawSocket.find([13, 10, 13, 10], in: buffer)
        }
        let headText = String(decoding: buffer[..<end!], as: UTF8.self)
        status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        chunked = headText.lowercased().contains("\r\ntransfer-encoding: chunked")
        raw = Array(buffer[(end! + 4)...])
    }

    /// Reads until `count` events have arrived (or the stream ended); throws on timeout.
    func events(_ count: Int, timeout: Double = 10) throws -> [ReceivedEvent] {
        var result: [ReceivedEvent] = []
        while result.count < count {
            result += parse()
            if result.count >= count || ended { break }
            do { try socket.fill(&raw, timeout: timeout) } catch RawHTTPError.closed { ended = true }
            decodeChunks()
        }
        return result
    }

    /// Reads everything until the server ends the response.
    func eventsUntilEnd(timeout: Double = 10) throws -> [ReceivedEvent] {
        var result: [ReceivedEvent] = []
        while !ended {
            decodeChunks()
            result += parse()
            if ended { break }
            do { try socket.fill(&raw, timeout: timeout) } catch RawHTTPError.closed { ended = true }
        }
        decodeChunks()
        return result + parse()
    }

    private func decodeChunks() {
        guard chunked else {
            text += raw
            raw.removeAll()
            return
        }
        while let lineEnd = RawSocket.find([13, 10], in: raw) {
            let sizeText = String(decoding: raw[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16) else { return }
            guard raw.count >= lineEnd + 2 + size + 2 else { return }
            if size == 0 { ended = true; raw.removeAll(); return }
            text += raw[(lineEnd + 2) ..< (lineEnd + 2 + size)]
            raw.removeFirst(lineEnd + 2 + size + 2)
        }
    }

    private func parse() -> [ReceivedEvent] {
        decodeChunks()
        var events: [ReceivedEvent] = []
        while let blank = RawSocket.find([10, 10], in: text) {
            let block = String(decoding: text[..<blank], as: UTF8.self)
            text.removeFirst(blank + 2)
            var event = ReceivedEvent(id: nil, event: "message", data: "")
            var dataLines: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") { continue }
                let (field, value): (Substring, Substring)
                if let colon = line.firstIndex(of: ":") {
                    field = line[..<colon]
                    var rest = line[line.index(after: colon)...]
                    if rest.hasPrefix(" ") { rest = rest.dropFirst() }
                    value = rest
                } else {
                    (field, value) = (line, "")
                }
                switch field {
                case "id": event.id = String(value)
                case "event": event.event = String(value)
                case "data": dataLines.append(String(value))
                case "retry": retry = Int(value)
                default: break
                }
            }
            if dataLines.isEmpty { continue }
            event.data = dataLines.joined(separator: "\n")
            events.append(event)
        }
        return events
    }

    func json(_ event: ReceivedEvent) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]) ?? [:]
    }
}
