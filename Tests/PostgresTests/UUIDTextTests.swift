import Foundation
import Postgres
import Testing

/// The direct formatter writes what Foundation writes, in lower case, for any UUID.
@Suite(.timeLimit(.minutes(5))) struct UUIDTextTests {
    @Test func matchesFoundationsTextLowerCased() {
        var uuids = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                     UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                     UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10))]
        uuids += (0 ..< 10_000).map { _ in UUID() }
        for uuid in uuids {
            #expect(UUIDText.lowercase(uuid) == uuid.uuidString.lowercased())
            #expect(uuid.postgresText == uuid.uuidString.lowercased())
        }
    }
}
