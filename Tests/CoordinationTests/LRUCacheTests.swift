@testable import Coordination
import TestSupport
import Testing

/// The cache's bookkeeping as a plain value.
@Suite(.timeLimit(.minutes(5)))
struct LRUCacheTests {
    let now = ContinuousClock.now

    @Test func evictsTheLeastRecentlyUsedWhenFull() {
        var cache = LRUCache<String, Int>(capacity: 3)
        for (index, key) in ["a", "b", "c"].enumerated() { cache.insert(index, for: key, expiry: nil) }
        _ = cache.value(for: "a", now: now)
        cache.insert(0, for: "b", expiry: nil)  // replacing also counts as use
        cache.insert(3, for: "d", expiry: nil)
        #expect(cache.count == 3)
        #expect(cache.value(for: "c", now: now) == nil)
        cache.insert(4, for: "e", expiry: nil)
        #expect(cache.value(for: "a", now: now) == nil)
        #expect(cache.value(for: "b", now: now) == 0)
        #expect(cache.value(for: "d", now: now) == 3)
        #expect(cache.value(for: "e", now: now) == 4)
    }

    @Test func reusesFreedSlotsAndKeepsOrderAcrossRemovals() {
        var cache = LRUCache<Int, Int>(capacity: 3)
        for key in 0 ..< 3 { cache.insert(key, for: key, expiry: nil) }
        cache.remove(1)
        cache.remove(1)
        cache.insert(10, for: 10, expiry: nil)
        cache.insert(11, for: 11, expiry: nil)  // evicts 0, the oldest left
        #expect(cache.count == 3)
        #expect(cache.value(for: 0, now: now) == nil)
        #expect([2, 10, 11].map { cache.value(for: $0, now: now) } == [2, 10, 11])
        cache.removeAll()
        #expect(cache.count == 0)
        cache.insert(1, for: 1, expiry: nil)
        #expect(cache.value(for: 1, now: now) == 1)
    }

    @Test func dropsAnEntryAtItsExpiry() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.insert(1, for: "a", expiry: now + .seconds(1))
        #expect(cache.value(for: "a", now: now) == 1)
        #expect(cache.value(for: "a", now: now + .seconds(1)) == nil)
        #expect(cache.count == 0)
    }

    @Test func zeroCapacityKeepsNothing() {
        var cache = LRUCache<String, Int>(capacity: 0)
        cache.insert(1, for: "a", expiry: nil)
        #expect(cache.count == 0)
        #expect(cache.value(for: "a", now: now) == nil)
    }

    /// Against a model (entries least recently used first, each with its value and whether it has expired): random
    /// inserts (some already past their expiry), lookups and removals keep the same entries, values and order.
    @Test(arguments: [UInt64(42), 7, 1234])
    func staysConsistentUnderRandomOperations(seed: UInt64) {
        var cache = LRUCache<Int, Int>(capacity: 8)
        var model: [(key: Int, value: Int, expired: Bool)] = []
        var random = SplitMix64(seed: seed)
        for step in 0 ..< 10_000 {
            let key = Int.random(in: 0 ..< 20, using: &random)
            switch Int.random(in: 0 ..< 3, using: &random) {
            case 0:
                let expired = Int.random(in: 0 ..< 5, using: &random) == 0
                cache.insert(step, for: key, expiry: expired ? now - .seconds(1) : (Bool.random(using: &random) ? nil : now + .seconds(60)))
                if let index = model.firstIndex(where: { $0.key == key }) {
                    model.remove(at: index)
                } else if model.count == 8 {
                    model.removeFirst()
                }
                model.append((key, step, expired))
            case 1:
                let found = cache.value(for: key, now: now)
                if let index = model.firstIndex(where: { $0.key == key }) {
                    let entry = model.remove(at: index)
                    if entry.expired {
                        #expect(found == nil)
                    } else {
                        #expect(found == entry.value)
                        model.append(entry)
                    }
                } else {
                    #expect(found == nil)
                }
            default:
                cache.remove(key)
                model.removeAll { $0.key == key }
            }
            #expect(cache.count == model.count)
        }
    }
}
