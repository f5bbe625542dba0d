import Foundation
import Testing
@testable import Webhooks

/// Queue keys order as Postgres orders uuid pairs, and a claim's next walk starts after the last queue it took.
@Suite(.timeLimit(.minutes(5))) struct QueueKeyTests {
    static func key(_ endpoint: UInt8, _ interaction: UInt8) -> QueueKey {
        func uuid(_ first: UInt8) -> UUID { UUID(uuid: (first, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
        return QueueKey(endpointID: uuid(endpoint), interactionID: uuid(interaction))
    }

    @Test func keysOrderByteByByteAsPostgresComparesUUIDs() {
        for _ in 0 ..< 200 {
            let (a, b, c) = (UUID(), UUID(), UUID())
            // Lowercase hex puts the digits in the bytes' order, so text order is byte order.
            #expect((QueueKey(endpointID: a, interactionID: c) < QueueKey(endpointID: b, interactionID: c))
                    == (a.uuidString.lowercased() < b.uuidString.lowercased()))
            #expect((QueueKey(endpointID: c, interactionID: a) < QueueKey(endpointID: c, interactionID: b))
                    == (a.uuidString.lowercased() < b.uuidString.lowercased()))
        }
        #expect(QueueKey.first < Self.key(0, 1))
        #expect(Self.key(1, 200) < Self.key(2, 0))
        #expect(Self.key(2, 1) < Self.key(2, 3))
        #expect(!(Self.key(2, 3) < Self.key(2, 3)))
    }

    @Test func theNextWalkStartsAfterTheLastQueueTaken() {
        let pivot = Self.key(5, 0)
        // Took queues above the pivot and, wrapping round, below it: the walk ended at the highest below.
        #expect(QueueKey.pivot(after: pivot, claimed: [Self.key(7, 0), Self.key(1, 0), Self.key(9, 0), Self.key(2, 0)])
                == Self.key(2, 0))
        // Took only queues above it: the highest of them.
        #expect(QueueKey.pivot(after: pivot, claimed: [Self.key(6, 0), Self.key(8, 1)]) == Self.key(8, 1))
        // Took nothing: the same start.
        #expect(QueueKey.pivot(after: pivot, claimed: []) == pivot)
    }
}
