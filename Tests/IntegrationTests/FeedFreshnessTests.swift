import App
import Coordination
import Foundation
import Postgres
import Testing
import TestSupport
@testable import Feeds

/// Readers and writers on a few feeds at once, through `FeedService` (its coordinator, its batched reads, its cache or
/// none), against the real database. The model is what the writers were told: a read that starts after an insert was
/// acknowledged must see that item — never a page from before it, whether the page came from memory, from a load
/// already running, or from a batch of other feeds' pages — and never another tenant's items.
@Suite("Feed reads after acknowledged writes", .timeLimit(.minutes(10)))
struct FeedFreshnessTests {
    @Test(arguments: [(UInt64(7), true), (UInt64(7), false), (UInt64(40), true), (UInt64(40), false)])
    func aReadStartedAfterAnAcknowledgedInsertSeesIt(seed: UInt64, caching: Bool) async throws {
        try await Self.check(seed: seed, caching: caching, changeCountSlots: 4096)
    }

    /// The same with the feeds' change counts in one or two slots, so that feeds share counts: a change to one feed
    /// retires the others' cached pages too, which must cost reloads and never freshness.
    @Test(arguments: [(UInt64(7), 1), (UInt64(40), 2)])
    func feedsSharingAChangeCountStayFresh(seed: UInt64, slots: Int) async throws {
        try await Self.check(seed: seed, caching: true, changeCountSlots: slots)
    }

    static func check(seed: UInt64, caching: Bool, changeCountSlots: Int) async throws {
        var random = SplitMix64(seed: seed)
        let database = try await MigratedDatabase.create(maxConnections: 4)
        let tenants = try await database.tenants(["mine", "theirs"])
        let service = FeedService(store: FeedStore(pool: database.pool), caching: caching,
                                  changeCountSlots: changeCountSlots)
        let names = ["a", "b", "c", "d"]
        // The other tenant's feeds of the same names hold items too; none may ever show up in ours.
        for name in names {
            _ = try await service.insert(Self.item("theirs"), into: FeedAddress(tenantID: tenants[1], key: name))
        }
        /// Guards, per feed, the inserts acknowledged so far.
        let acknowledged = Locked<[String: Int]>([:])
        let writes = (0 ..< 120).map { _ in (names.randomElement(using: &random)!, Int.random(in: 0 ... 3_000, using: &random)) }
        let reads = (0 ..< 600).map { _ in (names.randomElement(using: &random)!, Int.random(in: 0 ... 3_000, using: &random)) }
        let mine = tenants[0]

        let violations = try await withThrowingTaskGroup(of: [String].self) { group in
            for (name, delay) in writes {
                group.addTask {
                    try await Task.sleep(for: .microseconds(delay * 200))
                    _ = try await service.insert(Self.item("mine"), into: FeedAddress(tenantID: mine, key: name))
                    acknowledged.withLock { $0[name, default: 0] += 1 }
                    return []
                }
            }
            for (name, delay) in reads {
                group.addTask {
                    try await Task.sleep(for: .microseconds(delay * 200))
                    let atLeast = acknowledged.withLock { $0[name, default: 0] }
                    let key = FeedPageKey(feed: FeedAddress(tenantID: mine, key: name), limit: 100, cursor: nil)
                    let titles: [String]
                    switch try await service.page(key) {
                    case .noSuchFeed: titles = []
                    case .page(let page): titles = try Self.titles(page.body)
                    }
                    var problems: [String] = []
                    if titles.count < atLeast {
                        problems.append("feed \(name): \(titles.count) items after \(atLeast) acknowledged inserts")
                    }
                    if titles.contains(where: { $0 != "mine" }) { problems.append("feed \(name): another tenant's item") }
                    return problems
                }
            }
            return try await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(violations.isEmpty, "seed \(seed), caching \(caching), slots \(changeCountSlots): \(violations.prefix(5))")
        // And once everything is acknowledged, every feed shows every insert.
        for name in names {
            let key = FeedPageKey(feed: FeedAddress(tenantID: mine, key: name), limit: 100, cursor: nil)
            guard case .page(let page) = try await service.page(key) else {
                #expect(acknowledged.withLock { $0[name, default: 0] } == 0)
                continue
            }
            #expect(try Self.titles(page.body).count == acknowledged.withLock { $0[name, default: 0] })
        }
        await database.drop()
    }

    static func item(_ title: String) -> FeedStore.NewItem {
        FeedStore.NewItem(title: title, body: "", url: nil, imageURL: nil, publishedAt: nil)
    }

    static func titles(_ body: [UInt8]) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        return (object?["items"] as? [[String: Any]] ?? []).map { $0["title"] as? String ?? "?" }
    }
}
