import Foundation
import Testing

/// The stream checker's subscribers stop following only on an answer about a position they really hold: a 204 to a
/// probe past the log's end must not count as having seen the interaction end.
@Suite("Stream checker: when a subscriber stops following", .timeLimit(.minutes(10)))
struct FollowStepTests {
    @Test func a204EndsFollowingOnlyWhenItAnswersAPositionTheSubscriberHolds() {
        #expect(FollowStep.after(status: 204, start: .real) == .stop(finished: true))
        #expect(FollowStep.after(status: 204, start: .stale) == .stop(finished: true))
        #expect(FollowStep.after(status: 204, start: .future) == .again)
        #expect(FollowStep.after(status: 204, start: .garbage) == .again)
    }

    @Test func otherStatusesReadStopOrRetry() {
        #expect(FollowStep.after(status: 200, start: .none) == .read)
        #expect(FollowStep.after(status: 401, start: .real) == .stop(finished: false))
        for status in [0, 400, 404, 503] {
            #expect(FollowStep.after(status: status, start: .real) == .again)
        }
    }

    /// The history that once failed a run (seed 11): the subscriber read ids 1–20 and hung up, the interaction then
    /// ended with id 21, and its next connection was a probe past the end, answered 204. Stopping there leaves id 21
    /// unheld, which the checker rightly reports; going on, the next real resume gets it.
    @Test func stoppingAtAProbesAnswerWouldLeaveTheFinalEventUnheld() {
        var log = [LoggedEvent(seq: 1, kind: "state", payload: ["state": "started"])]
        log += (2 ... 20).map { LoggedEvent(seq: $0, kind: "message", payload: [:]) }
        log.append(LoggedEvent(seq: 21, kind: "state", payload: ["state": "ended"]))
        let check = StreamHistoryCheck(logs: ["i": log], facts: RunFacts())

        let first = connection(.zero, "0", status: 200, ids: Array(1 ... 20))
        let probe = connection(.future, "1020", status: 204, ids: [])
        #expect(FollowStep.after(status: probe.status, start: probe.start) == .again)
        #expect(check.violations([first, probe], finished: [2: true]) == ["subscriber 2: never received ids [21]"])

        let resume = connection(.real, "20", status: 200, ids: [21], endedByServer: true)
        let last = connection(.real, "21", status: 204, ids: [])
        #expect(check.violations([first, probe, resume, last], finished: [2: true]) == [])
    }

    private func connection(_ start: ObservedConnection.Start, _ lastEventID: String, status: Int, ids: [Int64],
                            endedByServer: Bool = false) -> ObservedConnection {
        var connection = ObservedConnection(subscriber: 2, interaction: "i", token: "t", start: start,
                                            lastEventID: lastEventID, port: 1, openedAt: Date())
        connection.status = status
        connection.endedByServer = endedByServer
        connection.events = ids.map { id in
            let event = switch id {
            case 1: ReceivedEvent(id: "1", event: "state", data: #"{"state":"started"}"#)
            case 21: ReceivedEvent(id: "21", event: "state", data: #"{"state":"ended"}"#)
            default: ReceivedEvent(id: String(id), event: "message", data: "{}")
            }
            return (event, Date())
        }
        return connection
    }
}
