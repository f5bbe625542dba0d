import Foundation
import HTTPServer
import Testing
import TestSupport
@testable import Interactions

/// A message POST's answer and its event's payload are written straight into bytes: they must be what the encoders
/// they replace wrote — the answer byte for byte what `JSON.encode` gives, the payload the same JSON document
/// `JSONSerialization` gave (the log stores it as `jsonb`, so only its value matters).
@Suite("Message encoding", .timeLimit(.minutes(5)))
struct MessageEncodingTests {
    static let pieces = ["a", "é", "\n", "\"", "\\", "/", "\u{0}", "\u{1F}", "\u{2028}", "😀", "text ", "<b>"]

    static func text(_ random: inout SplitMix64, upTo count: Int) -> String {
        (0 ..< Int.random(in: 0 ... count, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func theAnswerIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            let micros = Int64.random(in: 0 ... 4_000_000_000_000_000, using: &random)
            let message = InteractionMessage(
                seq: Int64.random(in: 1 ... Int64.max, using: &random), id: UUID().lowercased,
                senderID: Self.text(&random, upTo: 6), senderRole: Bool.random(using: &random) ? "agent" : "customer",
                text: Self.text(&random, upTo: 30), createdAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000),
                attachments: nil)
            // Assembled as the message statement assembles it, with the time in the form its `to_char` writes.
            let pieces = InteractionMessage.statementPieces(id: message.id, senderID: message.senderID,
                                                            senderRole: message.senderRole, text: message.text)
            let answer = InteractionMessage.answerHead + RFC3339.string(microsecondsSince1970: micros) + pieces.middle
                + String(message.seq) + pieces.tail
            #expect(Array(answer.utf8) == (try JSON.encode(message)), "seed \(seed): \(message)")
        }
    }

    @Test(arguments: [UInt64(6), 7])
    func aTextMessagesPayloadIsWhatTheGeneralWriterWrites(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            let id = UUID().lowercased
            let senderID = Bool.random(using: &random) ? Self.text(&random, upTo: 6) : nil
            let senderRole = Bool.random(using: &random) ? Self.text(&random, upTo: 3) : nil
            let text = Self.text(&random, upTo: 30)
            let general = InteractionStore.payloadJSON(["id": id, "sender_id": senderID, "sender_role": senderRole,
                                                        "text": text])
            let pieces = InteractionMessage.statementPieces(id: id, senderID: senderID, senderRole: senderRole, text: text)
            #expect(pieces.payload == general, "seed \(seed)")
        }
    }

    @Test(arguments: [UInt64(4), 5])
    func thePayloadIsTheDocumentJSONSerializationWrote(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            var payload: [String: String?] = [:]
            for _ in 0 ..< Int.random(in: 0 ... 6, using: &random) {
                payload[Self.text(&random, upTo: 3)] = Bool.random(using: &random) ? Self.text(&random, upTo: 10) : nil
            }
            let written = InteractionStore.payloadJSON(payload)
            let expected = try JSONSerialization.data(withJSONObject: payload.mapValues { $0 ?? NSNull() as Any },
                                                      options: [.sortedKeys])
            #expect(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? NSDictionary
                == JSONSerialization.jsonObject(with: expected) as? NSDictionary, "seed \(seed): \(written)")
        }
    }
}
