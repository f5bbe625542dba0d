import Accounts
import HTTPServer

// The one place where the interactions domain's errors become problem responses (RFC 9457).

extension InteractionError: ProblemConvertible {
    /// The problem the routes answer with: 404 for what the caller may not see, 409 for what the lifecycle or an
    /// assignment forbids, 400 for an event id or cursor beyond the log, 429 over the stream cap, 401 revoked.
    public var problem: Problem {
        switch self {
        case .notFound:
            return .notFound("No such interaction.")
        case .notAllowed(_, _, let state):
            return Problem(status: 409, title: "Conflict",
                           detail: "The interaction is \(state.rawValue); it cannot take this action.",
                           extensions: ["state": state.rawValue])
        case .alreadyAssigned(_, let holder):
            return Problem(status: 409, type: "/problems/already-assigned", title: "Already Assigned",
                           detail: "Another agent handles this interaction.", extensions: ["assigned_agent_id": holder])
        case .readBeyondLog(_, _, let lastSeq):
            return InteractionError.unknownEventID(lastSeq, parameter: "event_id",
                                                   detail: "event_id is beyond this interaction's last event (\(lastSeq)).")
        case .resumeBeyondLog(_, _, let lastSeq):
            return InteractionError.unknownEventID(
                lastSeq, parameter: "last_event_id",
                detail: "Last-Event-ID is beyond this interaction's last event (\(lastSeq)); reconnect without it.")
        case .cursorBeyondLog(_, _, let lastSeq):
            return .badRequest("cursor is beyond this interaction's log (\(lastSeq)); load from the start.", parameter: "cursor")
        case .streamLimit(let limit):
            return Problem(status: 429, title: "Too Many Requests",
                           detail: "This user already follows \(limit) event streams here; close one first.",
                           headers: ["Retry-After": "5"])
        case .sessionRevoked:
            return AuthError.revoked.problem
        case .unknownInboxPosition:
            return Problem(status: 400, type: "/problems/unknown-event-id", title: "Unknown Event ID",
                           detail: "Last-Event-ID is not a position of this inbox; reconnect without it.",
                           extensions: ["parameter": "last_event_id"])
        }
    }

    /// An event id this interaction's log never reached (another interaction's, or one from before a restore);
    /// `last_event_id` gives the log's last id.
    private static func unknownEventID(_ lastSeq: Int64, parameter: String, detail: String) -> Problem {
        Problem(status: 400, type: "/problems/unknown-event-id", title: "Unknown Event ID", detail: detail,
                extensions: ["parameter": parameter, "last_event_id": String(lastSeq)])
    }
}

extension IdempotencyError: ProblemConvertible {
    /// 400 for a malformed key, 422 for a key reused on another request, 409 while the first is in flight or when
    /// its record vanished (retry).
    public var problem: Problem {
        switch self {
        case .invalidKey:
            return .badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters.", parameter: "Idempotency-Key")
        case .reused:
            return Problem(status: 422, title: "Unprocessable Content",
                           detail: "This Idempotency-Key was used for a different request.",
                           extensions: ["parameter": "Idempotency-Key"])
        case .inProgress:
            return Problem(status: 409, title: "Conflict", detail: "A request with this Idempotency-Key is still in progress.")
        case .vanished:
            return Problem(status: 409, title: "Conflict", detail: "Retry the request.")
        }
    }
}
