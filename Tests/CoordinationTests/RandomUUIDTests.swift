import Coordination
import Foundation
import Testing

/// Random UUIDs are version 4 of the RFC variant, read back by Foundation as the same id, and do not repeat, made
/// one after another or from many tasks at once.
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

    /// Ids drawn at once from many tasks (across many refills of the shared buffer) never repeat.
    @Test func idsMadeConcurrentlyNeverRepeat() async {
        let batches = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0 ..< 8 { group.addTask { (0 ..< 5_000).map { _ in RandomUUID.make() } } }
            return await group.reduce(into: [[UUID]]()) { $0.append($1) }
        }
        let all = batches.flatMap { $0 }
        #expect(all.count == 40_000)
        #expect(Set(all).count == all.count)
    }
}
