import SwitchboardClient
import Testing

/// The WHATWG event stream interpretation, fed as whole streams, as odd chunks and byte by byte.
@Suite(.timeLimit(.minutes(5)))
struct EventStreamParserTests {
    /// Parses `text` in one chunk, then finishes the stream.
    func events(_ text: String) -> [ReceivedServerSentEvent] {
        var parser = EventStreamParser()
        defer { parser.finish() }
        return parser.feed(Array(text.utf8))
    }

    /// Parses `bytes` one byte per chunk.
    func eventsByteByByte(_ bytes: [UInt8]) -> [ReceivedServerSentEvent] {
        var parser = EventStreamParser()
        return bytes.flatMap { parser.feed([$0]) }
    }

    @Test func theSpecsStockTickerJoinsDataLinesWithLineFeeds() {
        #expect(events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ReceivedServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test func theSpecsIdExampleKeepsAndResetsTheLastEventID() {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        #expect(events(stream) == [
            ReceivedServerSentEvent(id: "1", data: "first event"),
            ReceivedServerSentEvent(id: nil, data: "second event"),
            ReceivedServerSentEvent(id: nil, data: " third event"),
        ])
    }

    @Test func theSpecsEmptyDataExampleDispatchesTwoEventsAndDropsTheCutOffOne() {
        #expect(events("data\n\ndata\ndata\n\ndata:") == [ReceivedServerSentEvent(data: ""), ReceivedServerSentEvent(data: "\n")])
    }

    @Test func theSpecsSpaceExampleRemovesExactlyOneSpace() {
        #expect(events("data:test\n\ndata: test\n\n") == [ReceivedServerSentEvent(data: "test"), ReceivedServerSentEvent(data: "test")])
        #expect(events("data:  two\n\n") == [ReceivedServerSentEvent(data: " two")])
        #expect(events("data:\ttab\n\n") == [ReceivedServerSentEvent(data: "\ttab")])
    }

    @Test(arguments: ["\n", "\r", "\r\n"])
    func everyLineEndingEndsLinesAndEvents(_ ending: String) {
        let stream = ["event: add", "data: a", "data: b", "", "data: c", "", ""].joined(separator: ending)
        let expected = [ReceivedServerSentEvent(event: "add", data: "a\nb"), ReceivedServerSentEvent(data: "c")]
        #expect(events(stream) == expected)
        #expect(eventsByteByByte(Array(stream.utf8)) == expected)
    }

    @Test func mixedLineEndingsInOneStream() {
        #expect(events("data: a\rdata: b\r\ndata: c\n\r\n") == [ReceivedServerSentEvent(data: "a\nb\nc")])
    }

    @Test func aCRLFSplitAcrossChunksIsOneLineEnding() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("data: one\r".utf8)) == [])
        // Were the LF a second line ending, it would be a blank line and dispatch "one" here.
        #expect(parser.feed(Array("\ndata: two\r".utf8)) == [])
        #expect(parser.feed(Array("\n\r".utf8)) == [ReceivedServerSentEvent(data: "one\ntwo")])
        #expect(parser.feed(Array("\n".utf8)) == [])
    }

    @Test func twoCRsAreTwoLineEndings() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("data: x\r".utf8)) == [])
        #expect(parser.feed(Array("\r".utf8)) == [ReceivedServerSentEvent(data: "x")])
    }

    @Test func aLeadingBOMIsSkippedEvenWhenSplit() {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let stream = bom + Array("data: x\n\n".utf8)
        #expect(eventsByteByByte(stream) == [ReceivedServerSentEvent(data: "x")])
        var parser = EventStreamParser()
        #expect(parser.feed(stream) == [ReceivedServerSentEvent(data: "x")])
    }

    @Test func onlyTheFirstBOMIsSkipped() {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        var parser = EventStreamParser()
        // The second BOM makes the first line's field name "\u{FEFF}data", an unknown field.
        #expect(parser.feed(bom + bom + Array("data: x\n\ndata: y\n\n".utf8)) == [ReceivedServerSentEvent(data: "y")])
        var later = EventStreamParser()
        #expect(later.feed(Array("data: a\n".utf8) + bom + Array("data: b\n\n".utf8)) == [ReceivedServerSentEvent(data: "a")])
    }

    @Test func commentsAreIgnoredAnywhere() {
        #expect(events(":hello\ndata: a\n: keep-alive\ndata: b\n:\n\n") == [ReceivedServerSentEvent(data: "a\nb")])
        #expect(events(": only a comment\n\n") == [])
    }

    @Test func aLineWithoutColonIsAFieldWithAnEmptyValue() {
        #expect(events("data\n\n") == [ReceivedServerSentEvent(data: "")])
        #expect(events("event\ndata: x\n\n") == [ReceivedServerSentEvent(event: "message", data: "x")])
    }

    @Test func theEventTypeDefaultsToMessageAndResetsAfterEachEvent() {
        #expect(events("event: update\ndata: 1\n\ndata: 2\n\n") == [
            ReceivedServerSentEvent(event: "update", data: "1"),
            ReceivedServerSentEvent(event: "message", data: "2"),
        ])
        // A type with no data dispatches nothing and does not leak into the next event.
        #expect(events("event: lost\n\ndata: 3\n\n") == [ReceivedServerSentEvent(data: "3")])
    }

    @Test func theLastEventIDPersistsAcrossEvents() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("id: 7\ndata: a\n\ndata: b\n\n".utf8)) == [
            ReceivedServerSentEvent(id: "7", data: "a"),
            ReceivedServerSentEvent(id: "7", data: "b"),
        ])
        #expect(parser.lastEventID == "7")
        #expect(parser.feed(Array("data: c\nid: 8\n\n".utf8)) == [ReceivedServerSentEvent(id: "8", data: "c")])
    }

    @Test func anIDOnlyEventUpdatesTheLastIDButDispatchesNothing() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("id: 42\n\n".utf8)) == [])
        #expect(parser.lastEventID == "42")
        #expect(parser.feed(Array("data: next\n\n".utf8)) == [ReceivedServerSentEvent(id: "42", data: "next")])
    }

    @Test func anIDContainingNULIsIgnored() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("id: 1\n\nid: 2\0x\ndata: a\n\n".utf8)) == [ReceivedServerSentEvent(id: "1", data: "a")])
        #expect(parser.lastEventID == "1")
    }

    @Test func anIDWithoutTheBlankLineIsNotCommittedWhenTheStreamEnds() {
        var parser = EventStreamParser()
        _ = parser.feed(Array("id: 1\n\nid: 2\ndata: cut off\n".utf8))
        parser.finish()
        #expect(parser.lastEventID == "1")
        #expect(parser.feed(Array("data: after reconnect\n\n".utf8)) == [ReceivedServerSentEvent(id: "1", data: "after reconnect")])
    }

    @Test(arguments: [("retry: 3000", 3000), ("retry:0", 0), ("retry", nil), ("retry: 3.5", nil), ("retry: -1", nil),
                      ("retry:  10", nil), ("retry: 10s", nil), ("retry: ١٢", nil), ("retry: 99999999999999999999999", nil)])
    func retryAcceptsOnlyASCIIDigits(_ line: String, _ expected: Int?) {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("\(line)\n\n".utf8)) == [])
        #expect(parser.retry == expected)
    }

    @Test func anInvalidRetryKeepsThePreviousValue() {
        var parser = EventStreamParser()
        _ = parser.feed(Array("retry: 500\nretry: soon\n\n".utf8))
        #expect(parser.retry == 500)
    }

    @Test func unknownFieldsAreIgnored() {
        #expect(events("foo: bar\ndata: a\nDATA: shouted\nData: b\n\n") == [ReceivedServerSentEvent(data: "a")])
    }

    @Test func anEventCutOffMidStreamIsDropped() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("data: whole\n\nevent: half\ndata: cut".utf8)) == [ReceivedServerSentEvent(data: "whole")])
        parser.finish()
        // Nothing of the cut-off event survives into the next connection.
        #expect(parser.feed(Array("data: fresh\n\n".utf8)) == [ReceivedServerSentEvent(data: "fresh")])
    }

    @Test func multiByteUTF8SplitAcrossChunksDecodes() {
        let bytes = Array("data: grüße 🙂\n\n".utf8)
        #expect(eventsByteByByte(bytes) == [ReceivedServerSentEvent(data: "grüße 🙂")])
    }

    @Test func aCombiningMarkAfterTheColonDoesNotHideIt() {
        #expect(events("data:\u{301}x\n\n") == [ReceivedServerSentEvent(data: "\u{301}x")])
        #expect(events("data: \u{301}x\n\n") == [ReceivedServerSentEvent(data: "\u{301}x")])
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        var parser = EventStreamParser()
        #expect(parser.feed(Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8)) == [ReceivedServerSentEvent(data: "a\u{FFFD}b")])
    }
}
