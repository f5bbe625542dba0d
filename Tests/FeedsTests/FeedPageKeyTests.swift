import Feeds
import Foundation
import Testing

/// Page keys (what the cache, the loads in flight and the batches are keyed by) are equal exactly when every field is
/// (the tenant, the feed's key in its exact case, the limit, the cursor), and equal keys hash alike.
@Suite(.timeLimit(.minutes(5))) struct FeedPageKeyTests {
    @Test func keysAreEqualExactlyWhenEveryFieldIs() {
        let tenants = [UUID(), UUID()]
        let cursors: [FeedCursor?] = [nil, FeedCursor(micros: 1_780_000_000_000_001, id: tenants[0]),
                                      FeedCursor(micros: 1_780_000_000_000_002, id: tenants[0])]
        var keys: [(fields: String, key: FeedPageKey)] = []
        for tenant in tenants {
            for name in ["news", "News", "promo"] {
                for limit in [20, 21] {
                    for (index, cursor) in cursors.enumerated() {
                        keys.append(("\(tenant) \(name) \(limit) \(index)",
                                     FeedPageKey(feed: FeedAddress(tenantID: tenant, key: name), limit: limit, cursor: cursor)))
                    }
                }
            }
        }
        for a in keys {
            for b in keys {
                #expect((a.key == b.key) == (a.fields == b.fields), "\(a.fields) / \(b.fields)")
            }
        }
        // Made again from the same fields: equal, same hash, one entry.
        let again = keys.map { entry in FeedPageKey(feed: entry.key.feed, limit: entry.key.limit, cursor: entry.key.cursor) }
        #expect(zip(keys, again).allSatisfy { $0.key == $1 && $0.key.hashValue == $1.hashValue })
        #expect(Set(keys.map(\.key) + again).count == keys.count)
    }
}

/// An address keeps the hash of its fields, taken when it is made: addresses made apart from equal fields (the key a
/// string of its own) are equal and hash alike, and differ from those of any other field.
@Suite(.timeLimit(.minutes(1))) struct FeedAddressHashTests {
    @Test func addressesMadeApartFromEqualFieldsAreEqualAndHashAlike() {
        let tenants = [UUID(), UUID()]
        let names = ["news", "News", "promo", "a", String(repeating: "k", count: 100)]
        for tenant in tenants {
            for name in names {
                let first = FeedAddress(tenantID: tenant, key: name)
                let again = FeedAddress(tenantID: UUID(uuid: tenant.uuid), key: String(decoding: Array(name.utf8), as: UTF8.self))
                #expect(first == again && first.hashValue == again.hashValue)
                for other in names where other != name {
                    #expect(first != FeedAddress(tenantID: tenant, key: other))
                }
                for otherTenant in tenants where otherTenant != tenant {
                    #expect(first != FeedAddress(tenantID: otherTenant, key: name))
                }
                #expect(Set([first, again, FeedAddress(tenantID: tenant, key: name)]).count == 1)
            }
        }
    }
}
