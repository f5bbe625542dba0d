import App
import Foundation
import Postgres
import Testing
import TestSupport
@testable import Feeds

/// Pages that miss the cache together are read in one statement (`FeedStore.pages`, behind `FeedService`'s batch
/// loader). What each key gets must be exactly what its own statement gives (`FeedStore.page`): the same bytes and
/// entity tag, `.noSuchFeed` for a feed its tenant does not have (another tenant's feed of that name included),
/// whatever else is in the batch — duplicates, pages after cursors, cursors from other feeds or from nowhere.
@Suite("Feed pages read in batches", .timeLimit(.minutes(10)))
struct FeedPageBatchTests {
    @Test(arguments: [UInt64(3), 17, 58])
    func aBatchedPageIsExactlyThePageReadAlone(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let database = try await MigratedDatabase.create(maxConnections: 4)
        let store = FeedStore(pool: database.pool)
        let world = try await Self.makeFeeds(store: store, database: database, random: &random)

        var batchesChecked = 0, pagesFound = 0
        for _ in 0 ..< 25 {
            let keys = (0 ..< Int.random(in: 2 ... 40, using: &random)).map { _ in world.randomKey(using: &random) }
            let batched = try await store.pages(keys)
            #expect(batched.count == Set(keys).count)
            for key in keys {
                let alone = try await store.page(key)
                guard let got = batched[key] else {
                    Issue.record("seed \(seed): no answer for \(key)")
                    return
                }
                switch (got, alone) {
                case (.noSuchFeed, .noSuchFeed):
                    break
                case (.page(let got), .page(let want)):
                    #expect(got.body == want.body && got.etag == want.etag, "seed \(seed): \(key)")
                    pagesFound += 1
                default:
                    Issue.record("seed \(seed): \(key) was \(got) in the batch but \(alone) alone")
                }
            }
            batchesChecked += 1
        }
        #expect(batchesChecked == 25 && pagesFound > 100)
        await database.drop()
    }

    /// Concurrent reads through the service (cache off, as when every request is for another feed) form batches,
    /// and every caller still gets its own key's page.
    @Test func concurrentReadsThroughTheServiceShareStatementsAndEachGetsItsOwnPage() async throws {
        var random = SplitMix64(seed: 91)
        let database = try await MigratedDatabase.create(maxConnections: 4)
        let store = FeedStore(pool: database.pool)
        let world = try await Self.makeFeeds(store: store, database: database, random: &random)
        let service = FeedService(store: store, caching: false)

        let keys = (0 ..< 400).map { _ in world.randomKey(using: &random) }
        let answers = try await withThrowingTaskGroup(of: (Int, FeedPageResult).self) { group in
            for (index, key) in keys.enumerated() {
                group.addTask { (index, try await service.page(key)) }
            }
            var answers = [FeedPageResult?](repeating: nil, count: keys.count)
            for try await (index, answer) in group { answers[index] = answer }
            return answers
        }
        for (key, answer) in zip(keys, answers) {
            switch (answer, try await store.page(key)) {
            case (.noSuchFeed?, .noSuchFeed): break
            case (.page(let got)?, .page(let want)): #expect(got.body == want.body && got.etag == want.etag, "\(key)")
            default: Issue.record("\(key): \(String(describing: answer)) through the service")
            }
        }
        let statistics = service.reads.statistics
        // 400 concurrent callers: batches formed (far fewer statements than distinct keys).
        #expect(statistics.batches < Set(keys).count / 2, "\(statistics)")
        await database.drop()
    }

    /// A reader misses the cache, and before it joins the coordinator, another caller's load of the same page finishes
    /// and caches it (the load is no longer in flight to join). Driven in that order, the late reader's load is
    /// answered from memory: 500 concurrent cold reads must cost one query, however the threads interleave.
    @Test func aReaderArrivingAfterTheLoadItMissedFinishedCostsNoQuery() async throws {
        let database = try await MigratedDatabase.create(maxConnections: 2)
        let tenant = try await database.tenants(["mine"])[0]
        let service = FeedService(store: FeedStore(pool: database.pool))
        let feed = FeedAddress(tenantID: tenant, key: "launch")
        _ = try await service.insert(FeedFreshnessTests.item("Welcome"), into: feed)
        let key = FeedPageKey(feed: feed, limit: 10, cursor: nil)
        let pageQueries = "%FROM feeds f%LEFT JOIN LATERAL%"

        guard case .load(let late) = service.freshness.withLock({ $0.read(key) }) else {
            Issue.record("a page was cached before any read")
            return
        }
        let before = try await database.database.statementCalls(like: pageQueries)
        let first = try await service.page(key)
        let second = try await service.page(loading: late)
        let queries = try await database.database.statementCalls(like: pageQueries) - before
        #expect(queries == 1, "\(queries) page queries")
        guard case .page(let one) = first, case .page(let two) = second else {
            Issue.record("no page: \(first), \(second)")
            return
        }
        #expect(one.body == two.body && one.etag == two.etag)
        await database.drop()
    }

    /// Two tenants with feeds of the same names (different items), an empty feed, and names nobody has.
    struct World {
        let tenants: [UUID]
        let names: [String]
        /// Cursors of real items, from every feed.
        let cursors: [FeedCursor]

        func randomKey(using random: inout SplitMix64) -> FeedPageKey {
            let feed = FeedAddress(tenantID: tenants.randomElement(using: &random)!, key: names.randomElement(using: &random)!)
            let cursor: FeedCursor?
            switch Int.random(in: 0 ..< 4, using: &random) {
            case 0, 1: cursor = nil
            case 2: cursor = cursors.randomElement(using: &random)
            default: cursor = FeedCursor(micros: FeedPageEncodingTests.randomMicros(using: &random), id: UUID())
            }
            return FeedPageKey(feed: feed, limit: Int.random(in: 1 ... 25, using: &random), cursor: cursor)
        }
    }

    static func makeFeeds(store: FeedStore, database: MigratedDatabase, random: inout SplitMix64) async throws -> World {
        let tenants = try await database.tenants(["A", "B"])
        _ = try await database.pool.withConnection { connection in
            try await connection.query("INSERT INTO feeds (tenant_id, key) VALUES ($1::uuid, 'empty')", [tenants[0]])
        }
        let shared = (0 ..< 3).map { _ in FeedPageEncodingTests.randomMicros(using: &random) }
        var cursors: [FeedCursor] = []
        for (index, tenant) in tenants.enumerated() {
            // "news" and "offers" in both tenants; "only-a" in A, "only-b" in B.
            for key in ["news", "offers", index == 0 ? "only-a" : "only-b"] {
                let feed = FeedAddress(tenantID: tenant, key: key)
                for _ in 0 ..< Int.random(in: 1 ... 30, using: &random) {
                    let micros = Bool.random(using: &random) ? shared.randomElement(using: &random)!
                        : FeedPageEncodingTests.randomMicros(using: &random)
                    let item = FeedStore.NewItem(
                        title: FeedPageEncodingTests.hostileText(using: &random, length: 1 ... 20),
                        body: FeedPageEncodingTests.hostileText(using: &random, length: 0 ... 40), url: nil, imageURL: nil,
                        publishedAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
                    _ = try await store.insert(item, into: feed, notice: feed.notice(nonce: UUID().uuidString))
                }
                cursors += try await FeedPageEncodingTests.items(of: feed, pool: database.pool).map(\.cursor)
            }
        }
        return World(tenants: tenants, names: ["news", "offers", "only-a", "only-b", "empty", "nobody"], cursors: cursors)
    }
}
