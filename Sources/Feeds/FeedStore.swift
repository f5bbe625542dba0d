import Accounts
import Foundation
import HTTPServer
import Postgres

/// A batched page read's rows did not match the keys it was sent (a fault in the statement, never in the input).
enum FeedStoreError: Error {
    case batchTagOutOfRange(Int64)
}

/// Feeds and their items in Postgres. Every statement is scoped by tenant; every write bumps the feed's version
/// and sends a change notice (delivered to other replicas when the transaction commits).
public struct FeedStore: Sendable {
    /// The NOTIFY channel carrying `FeedAddress.notice` payloads.
    public static let channel = "switchboard_feeds"

    let pool: PostgresPool

    /// A store over `pool`.
    public init(pool: PostgresPool) { self.pool = pool }

    private static let itemColumns = "i.id, i.title, i.body, i.url, i.image_url, i.published_at, i.updated_at"

    /// The version of feed `$2` of tenant `$1` and its newest `$3` items. Prepared, like the page after a cursor,
    /// and kept apart from it: one statement with an optional cursor would settle on a generic plan that cannot
    /// seek to the cursor, and a deep page would read every item before it.
    static let firstPageStatement = PreparedStatement(page(after: ""))

    /// The version of feed `$2` of tenant `$1` and its `$3` items after the cursor (`$4` microseconds, `$5` id).
    static let pageAfterStatement = PreparedStatement(page(after: """
        AND (published_at, id) < (timestamptz 'epoch' + $4::bigint * interval '1 microsecond', $5::uuid)
        """))

    private static func page(after cursorCondition: String) -> String {
        """
        SELECT f.version, \(FeedStore.itemColumns)
        FROM feeds f
        LEFT JOIN LATERAL (
            SELECT * FROM feed_items
            WHERE feed_id = f.id \(cursorCondition)
            ORDER BY published_at DESC, id DESC
            LIMIT $3
        ) i ON true
        WHERE f.tenant_id = $1::uuid AND f.key = $2
        """
    }

    /// The first pages of many feeds in one statement: for each `(tenant $1[n], key $2[n])` that exists, its version
    /// and newest `$3[n]` items, tagged with `n` and in page order. The same rows, page by page, as
    /// ``firstPageStatement`` gives for each pair alone.
    static let firstPagesStatement = PreparedStatement(pages(
        from: "unnest($1::uuid[], $2::text[], $3::int[]) WITH ORDINALITY AS b (tenant_id, key, lim, n)", after: ""))

    /// The pages after a cursor of many feeds in one statement (`$4[n]` microseconds, `$5[n]` id), as
    /// ``firstPagesStatement``.
    static let pagesAfterStatement = PreparedStatement(pages(
        from: """
            unnest($1::uuid[], $2::text[], $3::int[], $4::bigint[], $5::uuid[])
                WITH ORDINALITY AS b (tenant_id, key, lim, micros, cursor_id, n)
            """,
        after: "AND (published_at, id) < (timestamptz 'epoch' + b.micros * interval '1 microsecond', b.cursor_id)"))

    private static func pages(from batch: String, after cursorCondition: String) -> String {
        """
        SELECT b.n, f.version, \(FeedStore.itemColumns)
        FROM \(batch)
        JOIN feeds f ON f.tenant_id = b.tenant_id AND f.key = b.key
        LEFT JOIN LATERAL (
            SELECT * FROM feed_items
            WHERE feed_id = f.id \(cursorCondition)
            ORDER BY published_at DESC, id DESC
            LIMIT b.lim
        ) i ON true
        ORDER BY b.n, i.published_at DESC, i.id DESC
        """
    }

    /// Loads one page: the feed's version and up to `limit` items after `cursor`, newest first, plus one more
    /// to tell whether there are more, written into the response body as the rows are read (`FeedPageBody`).
    public func page(_ key: FeedPageKey) async throws -> FeedPageResult {
        let rows = try await pool.withConnection { connection in
            if let cursor = key.cursor {
                try await connection.query(FeedStore.pageAfterStatement,
                                           [key.feed.tenantID, key.feed.key, key.limit + 1, cursor.micros, cursor.id])
            } else {
                try await connection.query(FeedStore.firstPageStatement, [key.feed.tenantID, key.feed.key, key.limit + 1])
            }
        }
        guard !rows.isEmpty else { return .noSuchFeed }
        return try FeedStore.page(key, rows, rows.indices)
    }

    /// Loads many pages with at most two statements (first pages, pages after a cursor); a single key goes through
    /// ``page(_:)``. Every key gets an answer, `.noSuchFeed` for a feed its tenant does not have. What each page holds
    /// does not depend on the other keys of the batch.
    public func pages(_ keys: [FeedPageKey]) async throws -> [FeedPageKey: FeedPageResult] {
        if keys.count == 1 { return [keys[0]: try await page(keys[0])] }
        let groups = [(FeedStore.firstPagesStatement, keys.filter { $0.cursor == nil }),
                      (FeedStore.pagesAfterStatement, keys.filter { $0.cursor != nil })]
        var answers: [FeedPageKey: FeedPageResult] = [:]
        answers.reserveCapacity(keys.count)
        try await pool.withConnection { connection in
            for (statement, group) in groups where !group.isEmpty {
                let rows = try await connection.query(statement, FeedStore.batchParameters(group))
                try FeedStore.collect(group, rows, into: &answers)
            }
        }
        for key in keys where answers[key] == nil { answers[key] = .noSuchFeed }
        return answers
    }

    /// The arrays a batched page statement takes for `keys`, all first pages or all pages after a cursor: tenants,
    /// feed keys and limits (one more than the page holds), then for cursor pages the cursors' microseconds and ids.
    private static func batchParameters(_ keys: [FeedPageKey]) -> [(any PostgresEncodable)?] {
        var parameters: [(any PostgresEncodable)?] = [
            PostgresArray(keys.map(\.feed.tenantID)), PostgresArray(keys.map(\.feed.key)),
            PostgresArray(keys.map { $0.limit + 1 }),
        ]
        let cursors = keys.compactMap(\.cursor)
        if !cursors.isEmpty {
            parameters += [PostgresArray(cursors.map(\.micros)), PostgresArray(cursors.map(\.id))]
        }
        return parameters
    }

    /// Splits a batched read's rows (tagged with `n`, the 1-based position of their key in `keys`, in order) into
    /// pages.
    private static func collect(_ keys: [FeedPageKey], _ rows: PostgresRows,
                                into answers: inout [FeedPageKey: FeedPageResult]) throws {
        let tag = try rows.column("n")
        var start = 0
        while start < rows.count {
            let n: Int64 = try rows[start].decode(tag, as: Int64.self)
            var end = start + 1
            while end < rows.count, try rows[end].decode(tag, as: Int64.self) == n { end += 1 }
            guard n >= 1 && n <= keys.count else { throw FeedStoreError.batchTagOutOfRange(n) }
            let key = keys[Int(n) - 1]
            answers[key] = try page(key, rows, start ..< end)
            start = end
        }
    }

    /// The page of `key` in `rows[range]` (at least one row: the feed exists).
    private static func page(_ key: FeedPageKey, _ rows: PostgresRows, _ range: Range<Int>) throws -> FeedPageResult {
        let version: Int64 = try rows[range.lowerBound].decode("version")
        let bytes = try FeedPageBody.encode(rows, in: range, limit: key.limit)
        let variant = FNV1a.hash("\(key.limit)|\(key.cursor?.encoded ?? "")")
        return .page(FeedPage(bytes: bytes, etag: "\"\(version)-\(String(variant, radix: 16))\""))
    }

    /// The fields of a new item.
    public struct NewItem: Sendable {
        /// The headline.
        public var title: String
        /// The item's text (may be empty).
        public var body: String
        /// The link the item points to; nil for none.
        public var url: String?
        /// An image to show with the item; nil for none.
        public var imageURL: String?
        /// The publication time; nil for the database's current time.
        public var publishedAt: Date?
    }

    /// Adds an item, creating the feed on first use.
    public func insert(_ item: NewItem, into feed: FeedAddress, notice: String) async throws -> FeedItem {
        try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                WITH f AS (
                    INSERT INTO feeds (tenant_id, key) VALUES ($1::uuid, $2)
                    ON CONFLICT (tenant_id, key) DO UPDATE SET version = feeds.version + 1
                    RETURNING id
                )
                INSERT INTO feed_items (feed_id, title, body, url, image_url, published_at)
                SELECT f.id, $3, $4, $5, $6, coalesce($7::timestamptz, now()) FROM f
                RETURNING id, title, body, url, image_url, published_at, updated_at
                """, [feed.tenantID, feed.key, item.title, item.body, item.url, item.imageURL, item.publishedAt])
            try await FeedStore.notify(notice, on: connection)
            return try FeedStore.item(rows[0])
        }
    }

    /// The fields a PATCH may change; nil leaves a field as it is (`clearURL`/`clearImageURL` set it to null).
    public struct Changes: Sendable {
        /// The new headline; nil keeps it.
        public var title: String?
        /// The new text; nil keeps it.
        public var body: String?
        /// The new link; nil keeps it (see ``clearURL``).
        public var url: String?
        /// Sets the link to null; takes precedence over ``url``.
        public var clearURL = false
        /// The new image link; nil keeps it (see ``clearImageURL``).
        public var imageURL: String?
        /// Sets the image link to null; takes precedence over ``imageURL``.
        public var clearImageURL = false
        /// The new publication time, which moves the item in the feed's order; nil keeps it.
        public var publishedAt: Date?
    }

    /// Changes an item; nil when the feed has no such item.
    public func update(_ id: UUID, in feed: FeedAddress, with changes: Changes, notice: String) async throws -> FeedItem? {
        try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                UPDATE feed_items i SET
                    title = coalesce($4, i.title),
                    body = coalesce($5, i.body),
                    url = CASE WHEN $7::bool THEN NULL ELSE coalesce($6, i.url) END,
                    image_url = CASE WHEN $9::bool THEN NULL ELSE coalesce($8, i.image_url) END,
                    published_at = coalesce($10::timestamptz, i.published_at),
                    updated_at = now()
                FROM feeds f
                WHERE i.id = $3::uuid AND i.feed_id = f.id AND f.tenant_id = $1::uuid AND f.key = $2
                RETURNING i.id, i.title, i.body, i.url, i.image_url, i.published_at, i.updated_at
                """, [feed.tenantID, feed.key, id, changes.title, changes.body, changes.url, changes.clearURL,
                      changes.imageURL, changes.clearImageURL, changes.publishedAt])
            guard let row = rows.first else { return nil }
            try await FeedStore.bumpVersion(feed, notice: notice, on: connection)
            return try FeedStore.item(row)
        }
    }

    /// Deletes an item; false when the feed has no such item.
    public func delete(_ id: UUID, in feed: FeedAddress, notice: String) async throws -> Bool {
        try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                DELETE FROM feed_items i USING feeds f
                WHERE i.id = $3::uuid AND i.feed_id = f.id AND f.tenant_id = $1::uuid AND f.key = $2
                RETURNING i.id
                """, [feed.tenantID, feed.key, id])
            guard !rows.isEmpty else { return false }
            try await FeedStore.bumpVersion(feed, notice: notice, on: connection)
            return true
        }
    }

    private static func bumpVersion(_ feed: FeedAddress, notice: String, on connection: PostgresConnection) async throws {
        _ = try await connection.query("UPDATE feeds SET version = version + 1 WHERE tenant_id = $1::uuid AND key = $2",
                                       [feed.tenantID, feed.key])
        try await notify(notice, on: connection)
    }

    private static func notify(_ notice: String, on connection: PostgresConnection) async throws {
        try await connection.notify(channel: channel, payload: notice)
    }

    static func item(_ row: PostgresRow) throws -> FeedItem {
        FeedItem(id: try row.decode("id", as: UUID.self).lowercased, title: try row.decode("title"),
                 body: try row.decode("body"), url: try row.decode("url"), imageURL: try row.decode("image_url"),
                 publishedAt: try row.decode("published_at"), updatedAt: try row.decode("updated_at"))
    }
}

