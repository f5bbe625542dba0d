import Foundation
import Interactions
import Postgres
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(5))) struct InteractionStateTests {
    @Test func startedAllowsEverythingOnce() {
        #expect(InteractionState.started.after(.message) == .started)
        #expect(InteractionState.started.after(.typing) == .started)
        #expect(InteractionState.started.after(.media) == .started)
        #expect(InteractionState.started.after(.end) == .ended)
        #expect(InteractionState.started.after(.fail) == .failed)
        #expect(InteractionState.started.after(.assign) == .started)
    }

    @Test func endedAndFailedAreFinal() {
        for state in [InteractionState.ended, .failed] {
            for action in [InteractionState.Action.message, .typing, .media, .end, .fail, .assign] {
                #expect(state.after(action) == nil)
            }
        }
    }
}

/// The change-notice payloads, written and read in one place.
@Suite(.timeLimit(.minutes(5))) struct InteractionNoticeTests {
    let id = UUID(uuidString: "6F1C2D3E-0000-4000-8000-000000000001")!

    @Test func storedAndTypingNoticesRoundTrip() {
        let stored = InteractionNotice.stored(id, seq: 42)
        #expect(stored.payload == "6f1c2d3e-0000-4000-8000-000000000001:42")
        #expect(InteractionNotice(payload: stored.payload) == stored)
        let typing = InteractionNotice.typing(id, isTyping: true, role: "agent", user: "ldap:agent-7")
        #expect(typing.payload == "typing:6f1c2d3e-0000-4000-8000-000000000001:1:agent:ldap:agent-7")
        #expect(InteractionNotice(payload: typing.payload) == typing, "a user id with colons survives")
        let note = InteractionNotice.note(id, noteSeq: 7)
        #expect(InteractionNotice(payload: note.payload) == note)
        let redacted = InteractionNotice.redacted(id, seqs: [3, 5, 9])
        #expect(redacted.payload == "redacted:6f1c2d3e-0000-4000-8000-000000000001:3,5,9")
        #expect(InteractionNotice(payload: redacted.payload) == redacted)
        let empty = InteractionNotice.typing(id, isTyping: false, role: "customer", user: "")
        #expect(InteractionNotice(payload: empty.payload) == empty, "an empty last part is kept")
    }

    @Test func otherPayloadsAreNotNotices() {
        for payload in ["", "42", "not-a-uuid:3", "6f1c2d3e-0000-4000-8000-000000000001:x", "typing:6f1c:1:agent:u",
                        "typing:6f1c2d3e-0000-4000-8000-000000000001:1:agent", "6f1c2d3e-0000-4000-8000-000000000001:4:2",
                        "note:6f1c2d3e-0000-4000-8000-000000000001", "redacted:6f1c2d3e-0000-4000-8000-000000000001:3,x",
                        "6f1c2d3e-0000-4000-8000-000000000001\u{301}:4", "6f1c2d3e-0000-4000-8000-000000000001:4\u{0}"] {
            #expect(InteractionNotice(payload: payload) == nil, "\(payload)")
        }
    }

    /// Payloads put together from the forms' pieces and from what breaks them (signs, spaces, extra colons, marks
    /// that combine with a colon, NUL, ids of the wrong length or case) read as the splitting reader below reads them.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func everyPayloadReadsAsTheSplittingReaderReadsIt(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let id = "6f1c2d3e-0000-4000-8000-000000000001"
        let pieces = [id, id.uppercased(), String(id.dropLast()), id + "0", ":", ":", ":", "42", "-7", "+3", "0",
                      "9223372036854775807", "9223372036854775808", " 1", "x", "typing", "note", "redacted", "1,2",
                      "\u{301}", "\u{0}", "é", "", "agent", "ldap:u"]
        for _ in 0..<20_000 {
            let payload = (0..<Int.random(in: 1...6, using: &random))
                .map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }.joined()
            #expect(InteractionNotice(payload: payload) == Self.splittingReader(payload), "\(payload.debugDescription)")
        }
    }

    /// The reader before stored notices were read in place: every form by splitting on the colons.
    static func splittingReader(_ payload: String) -> InteractionNotice? {
        let parts = payload.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map(Substring.init)
        if parts.first == "typing" {
            guard parts.count >= 5, let id = UUIDText.parse(parts[1]) else { return nil }
            return .typing(id, isTyping: parts[2] == "1", role: String(parts[3]), user: parts[4...].joined(separator: ":"))
        }
        if parts.first == "note" {
            guard parts.count == 3, let id = UUIDText.parse(parts[1]), let noteSeq = Int64(parts[2]) else { return nil }
            return .note(id, noteSeq: noteSeq)
        }
        if parts.first == "redacted" {
            guard parts.count == 3, let id = UUIDText.parse(parts[1]) else { return nil }
            let pieces = parts[2].split(separator: ",")
            let seqs = pieces.compactMap { Int64($0) }
            guard seqs.count == pieces.count else { return nil }
            return .redacted(id, seqs: seqs)
        }
        guard parts.count == 2, let id = UUIDText.parse(parts[0]), let seq = Int64(parts[1]) else { return nil }
        return .stored(id, seq: seq)
    }
}
