import Foundation

/// Why the interactions domain refused an operation. Stores and the event streams throw it; the routes turn it into
/// a problem response (`InteractionProblems.swift`), so nothing below the routes speaks HTTP.
public enum InteractionError: Error, Sendable, Equatable {
    /// No interaction by this id that the caller may see: none at all, another tenant's, another customer's; nil when
    /// the id is not even a UUID. Callers must not learn which.
    case notFound(UUID?)
    /// The interaction's lifecycle forbids `action` in `state` (an interaction that is over takes nothing more).
    case notAllowed(InteractionState.Action, id: UUID, state: InteractionState)
    /// A claim of an interaction that `holder`, another agent, handles.
    case alreadyAssigned(UUID, holder: String)
    /// A read mark at `eventID`, beyond the interaction's log, whose last event is `lastSeq`.
    case readBeyondLog(UUID, eventID: Int64, lastSeq: Int64)
    /// A stream resumed after `lastEventID`, beyond the interaction's log, whose last event is `lastSeq`.
    case resumeBeyondLog(UUID, lastEventID: Int64, lastSeq: Int64)
    /// A page of messages asked for after `cursor`, beyond the interaction's log, whose last event is `lastSeq`.
    case cursorBeyondLog(UUID, cursor: Int64, lastSeq: Int64)
    /// The user already holds `limit` event streams in this process.
    case streamLimit(Int)
    /// The session asking for a stream was revoked (its token may still sit in a cache for a few seconds).
    case sessionRevoked(UUID)
    /// An inbox position this service did not give this tenant's streams (forged, altered, another tenant's, or from
    /// another database); the client starts again without it.
    case unknownInboxPosition
}
