import Foundation
@testable import SwitchboardClient
import Testing

/// Reading the interaction stream's events exactly as the server writes them (see `openapi.yaml`).
@Suite(.timeLimit(.minutes(5)))
struct InteractionEventDecodingTests {
    func decode(_ wire: String) -> [InteractionEvent?] {
        var parser = EventStreamParser()
        return parser.feed(Array(wire.utf8)).map { InteractionEvent($0) }
    }

    @Test func theSnapshotAndAFinalStateChange() throws {
        let events = decode("""
            retry: 2000

            id: 4
            event: state
            data: {"state": "started", "subject": "Card blocked", "snapshot": true, "failure_reason": null}

            id: 9
            event: state
            data: {"state": "failed", "created_at": "2026-11-30T14:20:01.123456+00:00", "failure_reason": "agent left"}


            """)
        guard case .state(let snapshot)? = events.first, case .state(let failed)? = events.last else {
            Issue.record("expected two states, got \(events)")
            return
        }
        #expect(snapshot.seq == 4 && snapshot.state == .started && snapshot.isSnapshot && !snapshot.isFinal)
        #expect(snapshot.subject == "Card blocked" && snapshot.createdAt == nil)
        #expect(failed.seq == 9 && failed.state == .failed && failed.isFinal && !failed.isSnapshot)
        #expect(failed.failureReason == "agent left")
        let createdAt = try #require(failed.createdAt)
        #expect(abs(createdAt.timeIntervalSince1970 - 1_796_048_401.123456) < 0.001)
    }

    /// An erasure: the `redacted` event names the ids, and a redacted message (replayed) says so.
    @Test func redactionsAndRedactedMessages() {
        let events = decode("""
            event: redacted
            data: {"event_ids":[3,7]}

            id: 3
            event: message
            data: {"id":"5b1c0a4e-0000-4000-8000-000000000001","sender_id":"erased-1f","sender_role":"customer","text":"","redacted":true,"created_at":"2026-12-05T10:00:00.000000Z"}

            id: 4
            event: message
            data: {"id":"5b1c0a4e-0000-4000-8000-000000000002","sender_id":"agent-1","sender_role":"agent","text":"hi","created_at":"2026-12-05T10:00:01.000000Z"}


            """)
        #expect(events.first == .redacted(InteractionEvent.Redaction(eventIDs: [3, 7])))
        #expect(events.first??.seq == nil)
        guard case .message(let redacted)? = events[1], case .message(let kept)? = events[2] else {
            Issue.record("expected two messages, got \(events)")
            return
        }
        #expect(redacted.isRedacted && redacted.text == "" && redacted.seq == 3)
        #expect(!kept.isRedacted && kept.text == "hi")
        #expect(decode("event: redacted\ndata: {\"ids\":[1]}\n\n") == [nil])
    }

    @Test func aMessageTakesItsSeqFromTheEventID() {
        let events = decode("""
            id: 12
            event: message
            data: {"id": "6f1c", "text": "Hello\\nthere", "sender_id": "alice", "created_at": "2026-11-30T14:20:01Z", "sender_role": "customer"}


            """)
        guard case .message(let message)? = events.first else {
            Issue.record("expected a message, got \(events)")
            return
        }
        #expect(message.seq == 12 && message.id == "6f1c" && message.text == "Hello\nthere")
        #expect(message.senderID == "alice" && message.senderRole == "customer")
        #expect(events.first??.seq == 12)
    }

    @Test func mediaAndTyping() {
        let events = decode("""
            id: 3
            event: media
            data: {"kind": "screen", "state": "active", "sender_id": "bob", "sender_role": "agent", "created_at": "2026-11-30T14:20:01Z"}

            event: typing
            data: {"typing": true, "sender_id": "bob", "sender_role": "agent", "expires_in": 5}


            """)
        guard case .media(let media)? = events.first, case .typing(let typing)? = events.last else {
            Issue.record("expected media then typing, got \(events)")
            return
        }
        #expect(media.seq == 3 && media.kind == .screen && media.state == .active && media.senderRole == "agent")
        #expect(typing.isTyping && typing.senderID == "bob" && typing.expiresIn == .seconds(5))
        #expect(events.last??.seq == nil)
    }

    @Test func readReceiptsAndAssignments() {
        let events = decode("""
            id: 7
            event: read
            data: {"created_at": "2026-11-30T14:20:01.5Z", "read_through": 6, "reader_id": "alice", "reader_role": "customer"}

            id: 8
            event: assignment
            data: {"by": "api", "created_at": "2026-11-30T14:20:02Z", "assigned_agent_id": "agent-8", "previous_agent_id": "agent-7"}

            id: 9
            event: assignment
            data: {"by": "agent-8", "created_at": "2026-11-30T14:20:03Z", "assigned_agent_id": null, "previous_agent_id": "agent-8"}


            """)
        guard events.count == 3, case .read(let read)? = events[0], case .assignment(let handed)? = events[1],
              case .assignment(let unassigned)? = events[2] else {
            Issue.record("expected a read and two assignments, got \(events)")
            return
        }
        #expect(read.seq == 7 && read.readerID == "alice" && read.readerRole == "customer" && read.readThrough == 6)
        #expect(handed.seq == 8 && handed.assignedAgentID == "agent-8" && handed.previousAgentID == "agent-7" && handed.by == "api")
        #expect(unassigned.assignedAgentID == nil && unassigned.previousAgentID == "agent-8" && unassigned.by == "agent-8")
        #expect(events.map { $0?.seq } == [7, 8, 9])
    }

    /// An automatic assignment has no one behind it: `by` is null, and the event is kept, not dropped.
    @Test func anAutomaticAssignmentDecodesWithNobodyBehindIt() {
        let events = decode("""
            id: 2
            event: assignment
            data: {"by": null, "created_at": "2026-11-30T14:20:03Z", "assigned_agent_id": "agent-3", "previous_agent_id": null}


            """)
        guard events.count == 1, case .assignment(let change)? = events[0] else {
            Issue.record("expected an assignment, got \(events)")
            return
        }
        #expect(change.seq == 2 && change.assignedAgentID == "agent-3" && change.previousAgentID == nil && change.by == nil)
    }

    @Test func unknownKindsMalformedDataAndStoredEventsWithoutAnIDAreSkipped() {
        let events = decode("""
            event: read
            data: {"created_at": "2026-11-30T14:20:01Z", "read_through": 6, "reader_id": "alice", "reader_role": "customer"}

            event: state
            data: {"state": "ended"}

            event: reconnect
            data: {"reason":"shutdown"}

            event: poll
            data: {}

            id: 5
            event: message
            data: not json

            id: 6
            event: assignment
            data: {"assigned_agent_id": "agent-8"}


            """)
        #expect(events.count == 6)
        #expect(events.allSatisfy { $0 == nil })
    }
}
