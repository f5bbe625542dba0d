import Foundation
import Testing

/// The stream checker's rule for erasures, on histories written by hand: before an erasure completed a stream may
/// show the erased user's message as written; after it (and the revocation bound), only redacted. A `redacted`
/// event must name events the log holds redacted.
@Suite("Stream checker: erasures in a history", .timeLimit(.minutes(10)))
struct ErasureHistoryTests {
    static let requested = Date(timeIntervalSince1970: 1_000)
    static let completed = requested.addingTimeInterval(7)
    static let log = [
        LoggedEvent(seq: 1, kind: "state", payload: ["state": "started"]),
        LoggedEvent(seq: 2, kind: "message", payload: ["sender_id": "erased-x", "text": ""], redacted: true),
        LoggedEvent(seq: 3, kind: "message", payload: ["sender_id": "agent-1", "text": "hello"]),
    ]
    static let check = StreamHistoryCheck(logs: ["i": log], facts: RunFacts(erasure: ErasureFact(
        user: "customer-1", tokens: ["erased-token"], requestedAt: requested, completedAt: completed)))

    private func connection(_ events: [(String, String, Date)]) -> ObservedConnection {
        var connection = ObservedConnection(subscriber: 1, interaction: "i", token: "agent", start: .zero,
                                            lastEventID: "0", port: 1, openedAt: Self.requested)
        connection.status = 200
        connection.events = events.map { id, data, at in
            (ReceivedEvent(id: id.isEmpty ? nil : id, event: id.isEmpty ? "redacted" : (id == "1" ? "state" : "message"), data: data), at)
        }
        return connection
    }

    private let started = ("1", #"{"state":"started"}"#, requested)
    private let reply = ("3", #"{"sender_id":"agent-1","text":"hello"}"#, requested)

    @Test func theTextAsWrittenMayShowOnlyBeforeTheErasureCompleted() {
        let asWritten = #"{"sender_id":"customer-1","text":"my card number"}"#
        let before = connection([started, ("2", asWritten, Self.completed.addingTimeInterval(-1)), reply])
        #expect(Self.check.violations([before], finished: [1: true]) == [])
        let after = connection([started, ("2", asWritten, Self.completed.addingTimeInterval(30)), reply])
        #expect(Self.check.violations([after], finished: [1: true]).count == 1)
        let redacted = connection([started, ("2", #"{"sender_id":"erased-x","text":"","redacted":true}"#, Self.completed), reply])
        #expect(Self.check.violations([redacted], finished: [1: true]) == [])
        // Another user's text never differs from the log, erasure or not.
        let altered = connection([started, ("2", asWritten, Self.requested), ("3", #"{"sender_id":"agent-1","text":"hi"}"#, Self.requested)])
        #expect(Self.check.violations([altered], finished: [1: true]).count == 1)
    }

    @Test func aRedactedEventNamesOnlyRedactedEvents() {
        let right = connection([started, ("", #"{"event_ids":[2]}"#, Self.completed)])
        #expect(Self.check.violations([right], finished: [1: true]).filter { $0.contains("redacted event") } == [])
        let wrong = connection([started, ("", #"{"event_ids":[3]}"#, Self.completed)])
        #expect(Self.check.violations([wrong], finished: [1: true]).filter { $0.contains("redacted event") }.count == 1)
    }

    @Test func theErasedUsersSessionsCountAsRevokedAtTheRequest() {
        #expect(Self.check.facts.revokedAt("erased-token") == Self.requested)
        #expect(Self.check.facts.revokedAt("agent") == nil)
    }
}
