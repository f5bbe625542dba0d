import Foundation
import TestSupport
import Testing
@testable import Feeds

/// The feeds' change counts in fixed slots: a bump moves the count of its feed's slot and of no other slot, and bumps
/// from many threads at once are all counted.
@Suite struct ChangeCountsTests {
    @Test(arguments: [1, 2, 64, 4096]) func aBumpMovesItsFeedsSlotAndNoOther(slots: Int) {
        var random = SplitMix64(seed: UInt64(slots))
        let counts = ChangeCounts(slots: slots)
        let tenants = [UUID(), UUID()]
        let feeds = (0 ..< 200).map { index in FeedAddress(tenantID: tenants[index % 2], key: "feed-\(index)") }
        var model = [Int](repeating: 0, count: slots)
        for _ in 0 ..< 2_000 {
            let feed = feeds.randomElement(using: &random)!
            let slot = counts.slot(of: feed)
            #expect(slot >= 0 && slot < slots)
            counts.bump(feed)
            model[slot] += 1
            let other = feeds.randomElement(using: &random)!
            #expect(counts.count(of: other) == UInt64(model[counts.slot(of: other)]))
            #expect(counts.count(of: feed) == UInt64(model[slot]))
        }
        // The same feed, asked again (an equal address, not the same value), lands in the same slot.
        let again = FeedAddress(tenantID: feeds[5].tenantID, key: String("feed-5".reversed().reversed()))
        #expect(counts.slot(of: again) == counts.slot(of: feeds[5]))
    }

    @Test func bumpsFromManyThreadsAtOnceAreAllCounted() async {
        let counts = ChangeCounts(slots: 8)
        let feed = FeedAddress(tenantID: UUID(), key: "hot")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 8 {
                group.addTask { for _ in 0 ..< 10_000 { counts.bump(feed) } }
            }
        }
        #expect(counts.count(of: feed) == 80_000)
    }
}
