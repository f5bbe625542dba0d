import Foundation

/// A webhook queue's key, `(endpoint_id, interaction_id)`, ordered as Postgres orders a pair of uuids (byte by
/// byte): where a delivery worker's claim starts its walk over the queues.
struct QueueKey: Sendable, Equatable, Comparable {
    var endpointID: UUID
    var interactionID: UUID

    /// Below every key: a walk from here starts at the first queue.
    static let first = QueueKey(endpointID: UUID(uuid: UUID.zero), interactionID: UUID(uuid: UUID.zero))

    static func < (lhs: QueueKey, rhs: QueueKey) -> Bool {
        let endpoints = UUID.compareBytes(lhs.endpointID, rhs.endpointID)
        return endpoints != 0 ? endpoints < 0 : UUID.compareBytes(lhs.interactionID, rhs.interactionID) < 0
    }

    /// Where the claim after one that walked from `pivot` and took the queues `claimed` starts: after the last queue
    /// the walk took from. The walk went up from `pivot` and then wrapped round to the first queue, so that is the
    /// highest key at or below `pivot` when it wrapped and took any there, else the highest of all; `pivot` itself
    /// when it took none.
    static func pivot(after pivot: QueueKey, claimed: [QueueKey]) -> QueueKey {
        claimed.filter { $0 <= pivot }.max() ?? claimed.max() ?? pivot
    }
}

extension UUID {
    /// The nil uuid's bytes.
    static let zero: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// Compares two uuids byte by byte, as Postgres does: negative, zero or positive.
    static func compareBytes(_ lhs: UUID, _ rhs: UUID) -> Int {
        withUnsafeBytes(of: lhs.uuid) { left in
            withUnsafeBytes(of: rhs.uuid) { right in
                for index in 0 ..< 16 where left[index] != right[index] {
                    return Int(left[index]) - Int(right[index])
                }
                return 0
            }
        }
    }
}
