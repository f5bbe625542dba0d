import Foundation
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

    /// The typing event's JSON, written directly, reads back as the object `JSONSerialization` wrote before, keys in
    /// the same (sorted) order, for any sender: quotes, backslashes, control characters, slashes, any script.
    @Test(arguments: [UInt64(4), 5, 6])
    func typingJSONReadsBackAsItsFields(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let pieces = ["a", "agent-1", "é", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "\u{7F}", "\u{2028}", "😀", "ß", " "]
        for _ in 0 ..< 300 {
            let user = (0 ..< Int.random(in: 0 ... 6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let role = Bool.random(using: &random) ? "agent" : "customer"
            let typing = Bool.random(using: &random)
            let event = NoticeBatch.typingEvent(isTyping: typing, role: role, user: user)
            let object = try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]
            #expect(object?["sender_id"] as? String == user, "\(event.data)")
            #expect(object?["sender_role"] as? String == role && object?["typing"] as? Bool == typing)
            #expect(object?["expires_in"] as? Int == 5 && object?.count == 4)
            let keys = ["expires_in", "sender_id", "sender_role", "typing"].map { event.data.range(of: "\"\($0)\":")?.lowerBound }
            #expect(keys.allSatisfy { $0 != nil } && keys.map { $0! } == keys.map { $0! }.sorted(), "\(event.data)")
            #expect(event.kind == .typing && event.seq == nil && !event.terminal)
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
