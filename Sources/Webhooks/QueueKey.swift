import Foundation

/// A webhook queue's key, `(endpoint_id, interaction_id)`, ordered as Postgres orders a pair of uuids (byte by
/// byte, which is Foundation's order of `UUID`): where a delivery worker's claim starts its walk over the queues.
struct QueueKey: Sendable, Equatable, Comparable {
    var endpointID: UUID
    var interactionID: UUID

    /// Below every key: a walk from here starts at the first queue.
    static let first = QueueKey(endpointID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                                interactionID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))

    static func < (lhs: QueueKey, rhs: QueueKey) -> Bool {
        (lhs.endpointID, lhs.interactionID) < (rhs.endpointID, rhs.interactionID)
    }

    /// Where the claim after one that walked from `pivot` and took the queues `claimed` starts: after the last queue
    /// the walk took from. The walk went up from `pivot` and then wrapped round to the first queue, so that is the
    /// highest key at or below `pivot` when it wrapped and took any there, else the highest of all; `pivot` itself
    /// when it took none.
    static func pivot(after pivot: QueueKey, claimed: [QueueKey]) -> QueueKey {
        claimed.filter { $0 <= pivot }.max() ?? claimed.max() ?? pivot
    }
}
