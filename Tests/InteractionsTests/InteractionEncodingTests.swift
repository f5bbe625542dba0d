import Foundation
import HTTPServer
import Testing
import TestSupport
@testable import Interactions

/// Interactions, read positions, messages, their files, inbox entries and pages of them write their own JSON
/// (``JSONWritable``): it must be what `JSON.encode` writes for the same value, byte for byte, whatever the strings,
/// numbers, dates and absent fields.
@Suite("Interaction encoding", .timeLimit(.minutes(5)))
struct InteractionEncodingTests {
    static func optional<T>(_ random: inout SplitMix64, _ make: (inout SplitMix64) -> T) -> T? {
        Bool.random(using: &random) ? make(&random) : nil
    }

    static func count(_ random: inout SplitMix64) -> Int64 {
        switch Int.random(in: 0 ... 4, using: &random) {
        case 0: return [Int64.min, Int64.max, 0, -1, 9, 10].randomElement(using: &random)!
        case 1: return Int64.random(in: Int64.min ... Int64.max, using: &random)
        default: return Int64.random(in: -1_000 ... 1_000_000, using: &random)
        }
    }

    /// A time from 1970 to 2096 with a fraction finer than a microsecond, so the rounding to microseconds is tried.
    static func date(_ random: inout SplitMix64) -> Date {
        Date(timeIntervalSince1970: Double.random(in: 0 ... 4_000_000_000, using: &random))
    }

    static func interaction(_ random: inout SplitMix64) -> Interaction {
        let text = { (random: inout SplitMix64) in MessageEncodingTests.text(&random, upTo: 12) }
        return Interaction(
            id: UUID().lowercased, customerID: text(&random), subject: optional(&random, text),
            state: InteractionState.allCases.randomElement(using: &random)!, failureReason: optional(&random, text),
            createdAt: date(&random), endedAt: optional(&random, date), assignedAgentID: optional(&random, text),
            unreadCount: count(&random), readByOtherThrough: count(&random), agentsOnline: optional(&random, count))
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func anInteractionIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            let interaction = Self.interaction(&random)
            #expect(interaction.jsonBytes() == (try JSON.encode(interaction)), "seed \(seed): \(interaction)")
        }
    }

    @Test(arguments: [UInt64(4), 5])
    func aReadPositionIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            let position = ReadPosition(readThrough: Self.count(&random), unreadCount: Self.count(&random))
            #expect(position.jsonBytes() == (try JSON.encode(position)), "seed \(seed): \(position)")
        }
    }

    @Test(arguments: [UInt64(6), 7])
    func aPageOfInteractionsIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 100 {
            let items = (0 ..< Int.random(in: 0 ... 4, using: &random)).map { _ in Self.interaction(&random) }
            let page = PageBody(items: items, nextCursor: Self.optional(&random) { MessageEncodingTests.text(&$0, upTo: 8) },
                                hasMore: Bool.random(using: &random))
            // A small first allocation, so that growing the document is tried too.
            #expect(page.jsonBytes(capacity: 8) == (try JSON.encode(page)), "seed \(seed)")
        }
    }

    static func attachment(_ random: inout SplitMix64) -> Interactions.Attachment {
        let text = { (random: inout SplitMix64) in MessageEncodingTests.text(&random, upTo: 12) }
        let pixels = { (random: inout SplitMix64) in Int.random(in: 0 ... 100_000, using: &random) }
        return Interactions.Attachment(id: UUID().lowercased, contentType: text(&random), size: count(&random), sha256: text(&random),
                          filename: optional(&random, text), width: optional(&random, pixels),
                          height: optional(&random, pixels), scanState: text(&random), createdAt: date(&random))
    }

    static func message(_ random: inout SplitMix64) -> InteractionMessage {
        let text = { (random: inout SplitMix64) in MessageEncodingTests.text(&random, upTo: 30) }
        let files = { (random: inout SplitMix64) in
            (0 ..< Int.random(in: 0 ... 3, using: &random)).map { _ in attachment(&random) }
        }
        return InteractionMessage(seq: count(&random), id: UUID().lowercased, senderID: text(&random),
                                  senderRole: text(&random), text: text(&random), createdAt: date(&random),
                                  attachments: optional(&random, files),
                                  redacted: optional(&random) { Bool.random(using: &$0) })
    }

    @Test(arguments: [UInt64(8), 9])
    func aMessageWithItsFilesIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            let message = Self.message(&random)
            #expect(message.jsonBytes() == (try JSON.encode(message)), "seed \(seed): \(message)")
            let attachment = Self.attachment(&random)
            #expect(attachment.jsonBytes() == (try JSON.encode(attachment)), "seed \(seed): \(attachment)")
        }
    }

    @Test(arguments: [UInt64(10), 11])
    func aPageOfMessagesIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 100 {
            let page = PageBody(items: (0 ..< Int.random(in: 0 ... 4, using: &random)).map { _ in Self.message(&random) },
                                nextCursor: Self.optional(&random) { String(Self.count(&$0)) }, hasMore: Bool.random(using: &random))
            #expect(page.jsonBytes(capacity: 8) == (try JSON.encode(page)), "seed \(seed)")
        }
    }

    @Test(arguments: [UInt64(12), 13])
    func anInboxEntryIsWhatTheEncoderWrites(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 500 {
            let text = { (random: inout SplitMix64) in MessageEncodingTests.text(&random, upTo: 20) }
            let lastMessage = Self.optional(&random) { random in
                InboxSummary.LastMessage(id: text(&random), kind: text(&random), text: text(&random),
                                         senderRole: text(&random),
                                         createdMicros: Int64.random(in: 0 ... 4_000_000_000_000_000, using: &random))
            }
            let entry = InboxEntry(interaction: Self.interaction(&random), lastMessage: lastMessage,
                                   inView: Bool.random(using: &random))
            #expect(entry.jsonBytes() == (try JSON.encode(entry)), "seed \(seed)")
        }
    }

    @Test func theTypingAnswerIsWhatTheEncoderWrites() throws {
        for typing in [true, false] {
            #expect(InteractionRoutes.typingAnswer(typing) == (try JSON.encode(["typing": typing])))
        }
    }
}
