import HTTPServer
import Testing
import TestSupport
@testable import Interactions

/// Events are encoded once, when made, and every stream writes those bytes: they must be exactly what encoding the
/// event for each stream gave.
@Suite("Stream event encoding", .timeLimit(.minutes(5)))
struct StreamEventEncodingTests {
    @Test(arguments: [1, 2, 3])
    func sharedBytesAreTheEventsOwnEncoding(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let pieces = ["a", "é", "\n", "\r\n", "\r", ":", " ", "{\"text\":\"hi\"}", "data: x", "\u{2028}", "id: 9"]
        for _ in 0 ..< 200 {
            let data = (0 ..< Int.random(in: 0 ... 8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let seq = Bool.random(using: &random) ? Int64.random(in: 1 ... 1 << 40, using: &random) : nil
            let kinds = InteractionStore.Kind.allCases.map(InteractionStreamEvent.Kind.logged) + [.typing, .reconnect]
            let kind = kinds.randomElement(using: &random)!
            let event = InteractionStreamEvent(seq: seq, kind: kind, data: data, terminal: Bool.random(using: &random))
            #expect(event.encoded == ServerSentEvent(id: seq.map(String.init), event: kind.eventName, data: data).encoded())
        }
    }

    @Test func theHeartbeatIsAComment() {
        #expect(InteractionStreamEvent.heartbeat.encoded == Array(": heartbeat\n\n".utf8))
        #expect(InteractionStreamEvent.reconnect(.sessionExpired).encoded
            == Array("event: reconnect\ndata: {\"reason\":\"session_expired\"}\n\n".utf8))
        #expect(InteractionStreamEvent.reconnect(.shutdown).encoded
            == Array("event: reconnect\ndata: {\"reason\":\"shutdown\"}\n\n".utf8))
    }
}
