import Foundation
import HTTPServer
import Testing
@testable import Interactions

/// Each domain error of the interactions module becomes exactly the problem the API documents: status, type, title,
/// detail, members and headers (the contract tests compare these byte for byte).
@Suite("Interaction problems", .timeLimit(.minutes(5)))
struct InteractionProblemTests {
    let id = UUID(uuidString: "6F1C2D3E-0000-4000-8000-000000000002")!

    @Test func notFoundIsTheSame404WhateverTheCause() {
        for error in [InteractionError.notFound(nil), .notFound(id)] {
            #expect(error.problem == Problem(status: 404, type: "/problems/not-found", title: "Not Found",
                                             detail: "No such interaction."))
        }
    }

    @Test func aLifecycleRefusalIsA409NamingTheState() {
        for state in [InteractionState.ended, .failed] {
            let problem = InteractionError.notAllowed(.message, id: id, state: state).problem
            #expect(problem == Problem(status: 409, type: "/problems/conflict", title: "Conflict",
                                       detail: "The interaction is \(state.rawValue); it cannot take this action.",
                                       extensions: ["state": state.rawValue]))
        }
    }

    @Test func aClaimOfAnotherAgentsInteractionIsAlreadyAssigned() {
        let problem = InteractionError.alreadyAssigned(id, holder: "agent-7").problem
        #expect(problem == Problem(status: 409, type: "/problems/already-assigned", title: "Already Assigned",
                                   detail: "Another agent handles this interaction.",
                                   extensions: ["assigned_agent_id": "agent-7"]))
    }

    @Test func eventIDsBeyondTheLogAreUnknownEventIDs() {
        let read = InteractionError.readBeyondLog(id, eventID: 9, lastSeq: 4).problem
        #expect(read == Problem(status: 400, type: "/problems/unknown-event-id", title: "Unknown Event ID",
                                detail: "event_id is beyond this interaction's last event (4).",
                                extensions: ["parameter": "event_id", "last_event_id": "4"]))
        let resume = InteractionError.resumeBeyondLog(id, lastEventID: 9, lastSeq: 4).problem
        #expect(resume == Problem(status: 400, type: "/problems/unknown-event-id", title: "Unknown Event ID",
                                  detail: "Last-Event-ID is beyond this interaction's last event (4); reconnect without it.",
                                  extensions: ["parameter": "last_event_id", "last_event_id": "4"]))
    }

    @Test func aCursorBeyondTheLogIsABadRequest() {
        let problem = InteractionError.cursorBeyondLog(id, cursor: 12, lastSeq: 4).problem
        #expect(problem == Problem(status: 400, type: "/problems/bad-request", title: "Bad Request",
                                   detail: "cursor is beyond this interaction's log (4); load from the start.",
                                   extensions: ["parameter": "cursor"]))
    }

    @Test func theStreamCapIsA429WithRetryAfter() {
        let problem = InteractionError.streamLimit(20).problem
        #expect(problem == Problem(status: 429, type: "/problems/too-many-requests", title: "Too Many Requests",
                                   detail: "This user already follows 20 event streams here; close one first."))
        #expect(problem.headers["Retry-After"] == "5")
    }

    @Test func aRevokedSessionIsTheRevokedTokens401() {
        let problem = InteractionError.sessionRevoked(id).problem
        #expect(problem.status == 401)
        #expect(problem.type == "/problems/unauthorized")
        #expect(problem.detail == "The token has been revoked.")
        #expect(problem.headers["WWW-Authenticate"]?.contains(#"error="invalid_token""#) == true)
    }

    @Test func idempotencyErrorsMapToTheirProblems() {
        #expect(IdempotencyError.invalidKey.problem
            == Problem(status: 400, type: "/problems/bad-request", title: "Bad Request",
                       detail: "Idempotency-Key must be 1 to 255 visible ASCII characters.",
                       extensions: ["parameter": "Idempotency-Key"]))
        #expect(IdempotencyError.reused(key: "k").problem
            == Problem(status: 422, type: "/problems/unprocessable-content", title: "Unprocessable Content",
                       detail: "This Idempotency-Key was used for a different request.",
                       extensions: ["parameter": "Idempotency-Key"]))
        #expect(IdempotencyError.inProgress(key: "k").problem
            == Problem(status: 409, type: "/problems/conflict", title: "Conflict",
                       detail: "A request with this Idempotency-Key is still in progress."))
        #expect(IdempotencyError.vanished(key: "k").problem
            == Problem(status: 409, type: "/problems/conflict", title: "Conflict", detail: "Retry the request."))
    }

    @Test func theResponseBodyIsTheProblemAsJSON() throws {
        let response = InteractionError.alreadyAssigned(id, holder: "a").problem.response(requestID: "r1")
        #expect(response.status == 409)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let body = String(decoding: try #require(response.bodyBytes), as: UTF8.self)
        #expect(body == #"{"assigned_agent_id":"a","detail":"Another agent handles this interaction.","#
            + #""instance":"urn:request:r1","status":409,"title":"Already Assigned","type":"\/problems\/already-assigned"}"#)
    }
}
