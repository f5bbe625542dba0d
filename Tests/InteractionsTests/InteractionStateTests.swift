import Foundation
import Interactions
import Testing

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
}
