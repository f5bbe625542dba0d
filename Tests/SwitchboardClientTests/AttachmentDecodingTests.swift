import Foundation
@testable import SwitchboardClient
import Testing

/// Reading attachments, and messages that carry them (or carry no text), as the server writes them.
@Suite(.timeLimit(.minutes(1)))
struct AttachmentDecodingTests {
    static let photo = """
        {"id": "0b6e1c1a-5f1e-4d2c-9a43-2f0e8b1d7c11", "content_type": "image/jpeg", "size": 5368709120,
         "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "filename": "card.jpg",
         "width": 4032, "height": 3024, "scan_state": "clean", "created_at": "2026-11-30T14:20:01.123456+00:00"}
        """

    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try APIDecoding.decoder().decode(type, from: Data(json.utf8))
    }

    @Test func anAttachmentWithEveryField() throws {
        let attachment = try Self.decode(Attachment.self, Self.photo)
        #expect(attachment.id == "0b6e1c1a-5f1e-4d2c-9a43-2f0e8b1d7c11")
        #expect(attachment.contentType == "image/jpeg" && attachment.size == 5_368_709_120, "sizes beyond 32 bits")
        #expect(attachment.sha256.hasPrefix("9f86d0") && attachment.filename == "card.jpg")
        #expect(attachment.width == 4032 && attachment.height == 3024 && attachment.scanState == "clean")
        #expect(abs(attachment.createdAt.timeIntervalSince1970 - 1_796_048_401.123456) < 0.001)
    }

    @Test func anAttachmentWithoutTheOptionalFields() throws {
        let attachment = try Self.decode(Attachment.self, """
            {"id": "a1", "content_type": "text/plain", "size": 3000, "sha256": "ab", "scan_state": "not_scanned",
             "created_at": "2026-11-30T14:20:01Z", "width": null}
            """)
        #expect(attachment.filename == nil && attachment.width == nil && attachment.height == nil)
        #expect(attachment.size == 3000 && attachment.scanState == "not_scanned")
    }

    @Test func aMessageFromBeforeAttachmentsHasNone() throws {
        let message = try Self.decode(Message.self, """
            {"seq": 4, "id": "m1", "sender_id": "alice", "sender_role": "customer", "text": "Hello",
             "created_at": "2026-11-30T14:20:01Z"}
            """)
        #expect(message.seq == 4 && message.text == "Hello" && message.attachments.isEmpty)
    }

    @Test func aMessageWithAttachmentsAndEmptyOrAbsentText() throws {
        let page = try Self.decode(Page<Message>.self, """
            {"items": [
              {"seq": 5, "id": "m2", "sender_id": "alice", "sender_role": "customer", "text": "",
               "attachments": [\(Self.photo)], "created_at": "2026-11-30T14:20:02Z"},
              {"seq": 6, "id": "m3", "sender_id": "agent-7", "sender_role": "agent",
               "attachments": [\(Self.photo), \(Self.photo.replacingOccurrences(of: "card.jpg", with: "back.jpg"))],
               "created_at": "2026-11-30T14:20:03Z"},
              {"seq": 7, "id": "m4", "sender_id": "alice", "sender_role": "customer", "text": "thanks",
               "attachments": [], "created_at": "2026-11-30T14:20:04Z"}
            ], "next_cursor": null, "has_more": false}
            """)
        #expect(page.items.map(\.text) == ["", "", "thanks"])
        #expect(page.items.map(\.attachments.count) == [1, 2, 0])
        #expect(page.items[1].attachments.map(\.filename) == ["card.jpg", "back.jpg"], "in the order sent")
        #expect(page.items[0].attachments.first == (try Self.decode(Attachment.self, Self.photo)))
    }

    @Test func aMessageMissingWhatItMustHaveIsRefused() {
        #expect(throws: DecodingError.self) {
            try Self.decode(Message.self, #"{"seq": 4, "id": "m1", "sender_role": "customer", "created_at": "2026-11-30T14:20:01Z"}"#)
        }
        #expect(throws: DecodingError.self) {
            try Self.decode(Message.self, """
                {"seq": 4, "id": "m1", "sender_id": "a", "sender_role": "customer", "created_at": "2026-11-30T14:20:01Z",
                 "attachments": [{"id": "x"}]}
                """)
        }
    }

    // MARK: The live `message` event

    static func events(_ wire: String) -> [InteractionEvent?] {
        var parser = EventStreamParser()
        return parser.feed(Array(wire.utf8)).map { InteractionEvent($0) }
    }

    @Test func theLiveEventCarriesTheAttachments() throws {
        let data = """
            {"id": "m2", "sender_id": "alice", "sender_role": "customer", "text": "", "attachments": [\(Self.photo)], "created_at": "2026-11-30T14:20:02.5Z"}
            """.replacingOccurrences(of: "\n", with: " ")
        let events = Self.events("id: 12\nevent: message\ndata: \(data)\n\n")
        guard case .message(let message)? = events.first else {
            Issue.record("expected a message, got \(events)")
            return
        }
        #expect(message.seq == 12 && message.id == "m2" && message.text.isEmpty)
        #expect(message.attachments == [try Self.decode(Attachment.self, Self.photo)])
    }

    @Test func theLiveEventWithoutTextOrWithoutAttachments() {
        let events = Self.events("""
            id: 13
            event: message
            data: {"id": "m3", "sender_id": "agent-7", "sender_role": "agent", "attachments": [{"id": "a1", "content_type": "application/pdf", "size": 10, "sha256": "ab", "scan_state": "not_scanned", "created_at": "2026-11-30T14:20:01Z"}], "created_at": "2026-11-30T14:20:03Z"}

            id: 14
            event: message
            data: {"id": "m4", "sender_id": "alice", "sender_role": "customer", "text": "old server", "created_at": "2026-11-30T14:20:04Z"}


            """)
        guard events.count == 2, case .message(let onlyFiles)? = events[0], case .message(let onlyText)? = events[1] else {
            Issue.record("expected two messages, got \(events)")
            return
        }
        #expect(onlyFiles.text == "" && onlyFiles.attachments.map(\.contentType) == ["application/pdf"])
        #expect(onlyFiles.attachments.first?.filename == nil)
        #expect(onlyText.text == "old server" && onlyText.attachments.isEmpty)
    }

    @Test func aLiveEventWithAMalformedAttachmentIsSkipped() {
        let events = Self.events("""
            id: 15
            event: message
            data: {"id": "m5", "sender_id": "alice", "sender_role": "customer", "attachments": [{"id": "a1"}], "created_at": "2026-11-30T14:20:04Z"}


            """)
        #expect(events.count == 1 && events[0] == nil)
    }
}
