import App
import Foundation
import HTTPServer
import Postgres
import Testing
import TestSupport
@testable import Feeds

/// A feed page's JSON body is written straight from the rows' text (`FeedPageBody`). The bytes must be exactly what
/// decoding the rows and encoding them with `PageBody<FeedItem>` gives (the page's shape, key order, string escapes,
/// timestamps, the cursor), page after page, for hostile text, ties in publication time, empty and missing feeds, and
/// only ever the asking tenant's items.
@Suite("Feed pages written from the rows", .timeLimit(.minutes(10)))
struct FeedPageEncodingTests {
    @Test(arguments: [UInt64(11), 29, 47])
    func everyPageIsByteForByteWhatSwiftEncodesFromTheRows(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let database = try await MigratedDatabase.create(maxConnections: 2)
        let pool = database.pool
        let store = FeedStore(pool: pool)
        // Two tenants with a feed of the same key each, random items in both; an empty feed; a key neither has.
        let tenants = try await database.tenants(["A", "B"])
        for tenant in tenants {
            let feed = FeedAddress(tenantID: tenant, key: "news")
            let count = Int.random(in: 0 ... 60, using: &random)
            // A few shared publication times, so ties are ordered by id.
            let shared = (0 ..< 3).map { _ in Self.randomMicros(using: &random) }
            for _ in 0 ..< count {
                let micros = Bool.random(using: &random) ? shared.randomElement(using: &random)! : Self.randomMicros(using: &random)
                let item = FeedStore.NewItem(
                    title: Self.hostileText(using: &random, length: 1 ... 40), body: Self.hostileText(using: &random, length: 0 ... 120),
                    url: Bool.random(using: &random) ? nil : "https://example.com/" + Self.hostileText(using: &random, length: 0 ... 20),
                    imageURL: Bool.random(using: &random) ? nil : Self.hostileText(using: &random, length: 0 ... 20),
                    publishedAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
                _ = try await store.insert(item, into: feed, notice: feed.notice(nonce: UUID().uuidString))
            }
            // Some items changed afterwards, so updated_at differs from the creation time.
            _ = try await pool.withConnection { connection in
                try await connection.query("""
                    UPDATE feed_items SET updated_at = updated_at + (random() * 1000000)::bigint * interval '1 microsecond'
                    WHERE random() < 0.5
                    """)
            }
        }
        _ = try await pool.withConnection { connection in
            try await connection.query("INSERT INTO feeds (tenant_id, key) VALUES ($1::uuid, 'empty')", [tenants[0]])
        }

        var pagesChecked = 0
        for tenant in tenants {
            for key in ["news", "empty"] where tenant == tenants[0] || key == "news" {
                let feed = FeedAddress(tenantID: tenant, key: key)
                let all = try await Self.items(of: feed, pool: pool)
                var cursor: FeedCursor?
                var offset = 0
                repeat {
                    let limit = Int.random(in: 1 ... 25, using: &random)
                    let pageKey = FeedPageKey(feed: feed, limit: limit, cursor: cursor)
                    guard case .page(let page) = try await store.page(pageKey) else {
                        Issue.record("seed \(seed): feed \(key) of a tenant that has it was not found")
                        return
                    }
                    let slice = Array(all[offset ..< min(offset + limit, all.count)])
                    let hasMore = offset + limit < all.count
                    cursor = hasMore ? slice.last!.cursor : nil
                    let expected = try JSON.encode(PageBody(items: slice.map(\.item), nextCursor: cursor?.encoded, hasMore: hasMore))
                    let got = String(decoding: page.body, as: UTF8.self), want = String(decoding: expected, as: UTF8.self)
                    #expect(got == want, "seed \(seed), feed \(key), offset \(offset), limit \(limit)")
                    if page.body != expected { return }
                    offset += limit
                    pagesChecked += 1
                } while cursor != nil
            }
        }
        #expect(pagesChecked >= 3)
        // A key the tenant does not have (the other tenant's feeds included) is not found.
        let stranger = FeedAddress(tenantID: tenants[1], key: "empty")
        guard case .noSuchFeed = try await store.page(FeedPageKey(feed: stranger, limit: 20, cursor: nil)) else {
            Issue.record("another tenant's feed was served")
            return
        }
        await database.drop()
    }

    /// Timestamps far from 1970 lose microseconds in a `Date` (a `Double`), so they are checked against their exact
    /// text instead: the page keeps every microsecond Postgres stored, from year 1 to 9999 and past it.
    @Test func timestampsAtTheEndsOfTheRangeKeepEveryMicrosecond() async throws {
        let database = try await TestDatabase.create()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 1)
        _ = try await Migrator.apply(Migrations.all, pool: pool)
        // Year 10000 is not in the form the session prints most times in, so it takes the exact parse.
        let expected = ["10000-01-01T00:00:00.000001Z", "9999-12-31T23:59:59.999999Z", "2026-12-01T21:43:45.000001Z", "1970-01-01T00:00:00.000000Z",
                        "1969-12-31T23:59:59.999999Z", "0999-02-03T04:05:06.700000Z", "0001-01-01T00:00:00.000001Z"]
        let tenant: UUID = try await pool.withConnection { connection in
            let rows = try await connection.query("INSERT INTO tenants (name) VALUES ('T') RETURNING id")
            let tenant: UUID = try rows[0].decode("id")
            _ = try await connection.query("""
                WITH f AS (INSERT INTO feeds (tenant_id, key) VALUES ($1::uuid, 'ends') RETURNING id)
                INSERT INTO feed_items (feed_id, title, published_at, updated_at)
                SELECT f.id, 't', ts::timestamptz, ts::timestamptz FROM f, unnest($2::text[]) AS ts
                """, [tenant, "{" + expected.joined(separator: ",") + "}"])
            return tenant
        }
        guard case .page(let page) = try await FeedStore(pool: pool).page(FeedPageKey(feed: FeedAddress(tenantID: tenant, key: "ends"),
                                                                                       limit: 20, cursor: nil)) else {
            Issue.record("feed not found")
            return
        }
        let object = try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any]
        let items = object?["items"] as? [[String: Any]] ?? []
        #expect(items.map { $0["published_at"] as? String } == expected)
        #expect(items.map { $0["updated_at"] as? String } == expected)
        await pool.close()
        await database.drop()
    }

    struct StoredItem {
        let item: FeedItem
        let cursor: FeedCursor
    }

    /// Every item of `feed` in page order, decoded from its rows (the reference the pages are compared with).
    static func items(of feed: FeedAddress, pool: PostgresPool) async throws -> [StoredItem] {
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT i.id, i.title, i.body, i.url, i.image_url, i.published_at, i.updated_at,
                    (extract(epoch FROM i.published_at) * 1000000)::bigint AS micros,
                    (extract(epoch FROM i.updated_at) * 1000000)::bigint AS updated_micros
                FROM feed_items i JOIN feeds f ON f.id = i.feed_id
                WHERE f.tenant_id = $1::uuid AND f.key = $2
                ORDER BY i.published_at DESC, i.id DESC
                """, [feed.tenantID, feed.key])
        }
        return try rows.map { row in
            // The times from their exact microseconds: a `Date` decoded from the timestamp's text can be a
            // microsecond off, which pages once showed.
            var item = try FeedStore.item(row)
            let micros: Int64 = try row.decode("micros")
            item.publishedAt = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            item.updatedAt = Date(timeIntervalSince1970: Double(try row.decode("updated_micros", as: Int64.self)) / 1_000_000)
            return StoredItem(item: item, cursor: FeedCursor(micros: micros, id: try row.decode("id")))
        }
    }

    /// Microseconds within ±95 years of 1970 (below 2^52), where a `Date` made from them still prints every one.
    static func randomMicros(using random: inout SplitMix64) -> Int64 {
        Int64.random(in: -3_000_000_000_000_000 ... 3_000_000_000_000_000, using: &random)
    }

    /// Text that JSON must escape or pass through untouched: quotes, backslashes, slashes, every control character
    /// but NUL (which Postgres text cannot hold), DEL, line and paragraph separators, a byte-order mark, accents,
    /// and characters outside the Basic Multilingual Plane.
    static func hostileText(using random: inout SplitMix64, length: ClosedRange<Int>) -> String {
        let specials: [Unicode.Scalar] = ["\"", "\\", "/", "\u{7F}", "\u{2028}", "\u{2029}", "\u{FEFF}", "é", "€", "😀", "𝄞", "<", "&", "'"]
        var scalars = String.UnicodeScalarView()
        for _ in 0 ..< Int.random(in: length, using: &random) {
            switch Int.random(in: 0 ..< 4, using: &random) {
            case 0: scalars.append(Unicode.Scalar(UInt8.random(in: 1 ... 0x1F, using: &random)))
            case 1: scalars.append(specials.randomElement(using: &random)!)
            default: scalars.append(Unicode.Scalar(UInt8.random(in: 0x20 ... 0x7E, using: &random)))
            }
        }
        return String(scalars)
    }
}
