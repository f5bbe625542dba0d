import TestSupport
import HTTPServer
import Testing

/// The bytes a client receives, and what a WHATWG-conforming client makes of them.
@Suite(.timeLimit(.minutes(5)))
struct ServerSentEventTests {
    @Test func singleLineData() {
        #expect(text(ServerSentEvent(data: "hello").encoded()) == "data: hello\n\n")
    }

    @Test func everyKindOfLineBreakStartsANewDataLine() {
        let expected = "data: a\ndata: b\ndata: c\ndata: d\n\n"
        #expect(text(ServerSentEvent(data: "a\nb\nc\nd").encoded()) == expected)
        #expect(text(ServerSentEvent(data: "a\r\nb\r\nc\r\nd").encoded()) == expected)
        #expect(text(ServerSentEvent(data: "a\rb\rc\rd").encoded()) == expected)
        #expect(text(ServerSentEvent(data: "a\r\nb\rc\nd").encoded()) == expected)
    }

    @Test func emptyLinesAndTrailingBreaksSurvive() {
        let encoded = ServerSentEvent(data: "a\n\nb\n").encoded()
        #expect(text(encoded) == "data: a\ndata:\ndata: b\ndata:\n\n")
        #expect(parse(encoded).map(\.data) == ["a\n\nb\n"])
        #expect(text(ServerSentEvent(data: "\r\r\n").encoded()) == "data:\ndata:\ndata:\n\n")
    }

    @Test func leadingSpaceIsPreserved() {
        let encoded = ServerSentEvent(id: " 7", event: "  x", data: " indented\n  twice").encoded()
        #expect(text(encoded) == "id:  7\nevent:   x\ndata:  indented\ndata:   twice\n\n")
        #expect(parse(encoded) == [Parsed(id: " 7", event: "  x", data: " indented\n  twice")])
    }

    @Test func emptyDataIsOneBareDataLineAndStillAnEvent() {
        let encoded = ServerSentEvent(data: "").encoded()
        #expect(text(encoded) == "data:\n\n")
        #expect(parse(encoded) == [Parsed(data: "")])
    }

    @Test func unicodeIsWrittenAsUTF8() {
        let encoded = ServerSentEvent(event: "grüße", data: "héllo 😀\n日本").encoded()
        #expect(encoded == Array("event: grüße\ndata: héllo 😀\ndata: 日本\n\n".utf8))
        #expect(parse(encoded) == [Parsed(event: "grüße", data: "héllo 😀\n日本")])
    }

    @Test func idEventAndRetryLinesComeFirst() {
        let event = ServerSentEvent(id: "42", event: "message.created", data: "{\"a\":1}", retry: 3_000)
        #expect(text(event.encoded()) == "id: 42\nevent: message.created\nretry: 3000\ndata: {\"a\":1}\n\n")
        #expect(parse(event.encoded()) == [Parsed(id: "42", event: "message.created", data: "{\"a\":1}", retry: 3_000)])
    }

    @Test func emptyIdResetsTheLastEventId() {
        #expect(text(ServerSentEvent(id: "", data: "x").encoded()) == "id:\ndata: x\n\n")
        let stream = ServerSentEvent(id: "1", data: "a").encoded() + ServerSentEvent(id: "", data: "b").encoded()
        #expect(parse(stream).map(\.id) == ["1", ""])
    }

    @Test func lineBreaksInIdAndEventBecomeSpacesAndNULLeavesTheId() {
        let event = ServerSentEvent(id: "1\r\n2\u{0}3", event: "a\nb\rc", data: "x")
        #expect(text(event.encoded()) == "id: 1  23\nevent: a b c\ndata: x\n\n")
        #expect(parse(event.encoded()) == [Parsed(id: "1  23", event: "a b c", data: "x")])
    }

    @Test func negativeRetryIsLeftOut() {
        #expect(text(ServerSentEvent(data: "x", retry: -1).encoded()) == "data: x\n\n")
        #expect(text(ServerSentEvent(data: "x", retry: 0).encoded()) == "retry: 0\ndata: x\n\n")
    }

    @Test func commentsAreIgnoredByClients() {
        #expect(text(ServerSentEvent.comment("heartbeat")) == ": heartbeat\n\n")
        #expect(text(ServerSentEvent.comment("")) == ":\n\n")
        let sneaky = ServerSentEvent.comment("a\ndata: injected\r\nid: 9")
        #expect(text(sneaky) == ": a\n: data: injected\n: id: 9\n\n")
        #expect(parse(sneaky + ServerSentEvent(data: "real").encoded()) == [Parsed(data: "real")])
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func randomStringsRoundTrip(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let pieces = ["a", "Z", " ", "  ", ":", "\r", "\n", "\r\n", "\n\r", "😀", "é", "日", "\u{0}", "\t", "data:"]
        func randomString() -> String {
            (0 ..< Int.random(in: 0 ..< 24, using: &random))
                .map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        for _ in 0 ..< 500 {
            let events = (0 ..< Int.random(in: 1 ..< 4, using: &random)).map { _ in
                ServerSentEvent(
                    id: Bool.random(using: &random) ? randomString() : nil,
                    event: Bool.random(using: &random) ? randomString() : nil,
                    data: randomString(),
                    retry: Bool.random(using: &random) ? Int.random(in: -5 ..< 100_000, using: &random) : nil)
            }
            let parsed = parse(events.flatMap { $0.encoded() })
            #expect(parsed.count == events.count)
            var lastID = ""
            for (event, parsed) in zip(events, parsed) {
                if let id = event.id { lastID = withoutNUL(singleLine(id)) }
                #expect(parsed.data == normalizingLineBreaks(event.data))
                #expect(parsed.id == lastID)
                #expect(parsed.event == event.event.map(singleLine) ?? "")
                #expect(parsed.retry == event.retry.flatMap { $0 >= 0 ? $0 : nil })
            }
        }
    }
}

// MARK: - A reference client

/// What a client dispatches for one event: ``id`` is its last event id, ``event`` its type before defaulting to
/// "message", ``retry`` a reconnection time set while reading it.
private struct Parsed: Equatable {
    var id = ""
    var event = ""
    var data: String
    var retry: Int?
}

/// Parses an event stream as the WHATWG HTML standard's "interpreting an event stream" steps do.
private func parse(_ bytes: [UInt8]) -> [Parsed] {
    var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
    if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
    var lines: [String] = []
    var line = String.UnicodeScalarView()
    var index = 0
    while index < scalars.count {
        let scalar = scalars[index]
        index += 1
        guard scalar == "\r" || scalar == "\n" else { line.append(scalar); continue }
        if scalar == "\r", index < scalars.count, scalars[index] == "\n" { index += 1 }
        lines.append(String(line))
        line = String.UnicodeScalarView()
    }  // an unterminated last line is discarded, as at the end of a stream

    var events: [Parsed] = []
    var data = "", eventType = "", lastEventID = "", retry: Int?
    for line in lines {
        if line.isEmpty {
            defer { data = ""; eventType = ""; retry = nil }
            guard !data.isEmpty else { continue }
            if data.hasSuffix("\n") { data.removeLast() }
            events.append(Parsed(id: lastEventID, event: eventType, data: data, retry: retry))
            continue
        }
        if line.hasPrefix(":") { continue }
        var field = line, value = ""
        if let colon = line.firstIndex(of: ":") {
            field = String(line[..<colon])
            value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
        }
        switch field {
        case "event": eventType = value
        case "data": data += value + "\n"
        case "id" where !value.unicodeScalars.contains("\u{0}"): lastEventID = value
        case "retry" where !value.isEmpty && value.unicodeScalars.allSatisfy({ "0" ... "9" ~= $0 }): retry = Int(value)
        default: break
        }
    }
    return events
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// `string` with CRLF and lone CR turned into LF, as a client reassembles data lines.
private func normalizingLineBreaks(_ string: String) -> String {
    var result = String.UnicodeScalarView()
    var afterCR = false
    for scalar in string.unicodeScalars {
        defer { afterCR = scalar == "\r" }
        if scalar == "\n", afterCR { continue }
        result.append(scalar == "\r" ? "\n" : scalar)
    }
    return String(result)
}

/// `string` with each CR and LF replaced by a space, as ids and event types are encoded.
private func singleLine(_ string: String) -> String {
    String(String.UnicodeScalarView(string.unicodeScalars.map { $0 == "\r" || $0 == "\n" ? " " : $0 }))
}

private func withoutNUL(_ string: String) -> String {
    String(String.UnicodeScalarView(string.unicodeScalars.filter { $0 != "\u{0}" }))
}
