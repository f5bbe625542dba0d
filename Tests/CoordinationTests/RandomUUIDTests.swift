import Coordination
import Foundation
import Testing

/// Random UUIDs are version 4 of the RFC variant, read back by Foundation as the same id, and do not repeat.
@Suite(.timeLimit(.minutes(2))) struct RandomUUIDTests {
    @Test func versionFourOfTheVariantAndNeverTheSame() {
        var seen = Set<UUID>()
        var bitsSet = [Int](repeating: 0, count: 128)
        let count = 50_000
        for _ in 0 ..< count {
            let uuid = RandomUUID.make()
            let text = uuid.uuidString
            #expect(Array(text)[14] == "4", "\(text)")
            #expect("89AB".contains(Array(text)[19]), "\(text)")
            #expect(UUID(uuidString: text) == uuid)
            #expect(seen.insert(uuid).inserted)
            withUnsafeBytes(of: uuid.uuid) { bytes in
                for bit in 0 ..< 128 where bytes[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 { bitsSet[bit] += 1 }
            }
        }
        // The 122 random bits are each set about half the time (a stuck or copied bit would not be).
        let fixed: Set<Int> = [48, 49, 50, 51, 64, 65]
        for bit in 0 ..< 128 where !fixed.contains(bit) {
            #expect((count * 45 / 100 ... count * 55 / 100).contains(bitsSet[bit]), "bit \(bit): \(bitsSet[bit])")
        }
        #expect(bitsSet[49] == count && bitsSet[48] == 0 && bitsSet[50] == 0 && bitsSet[51] == 0)
        #expect(bitsSet[64] == count && bitsSet[65] == 0)
    }
}
