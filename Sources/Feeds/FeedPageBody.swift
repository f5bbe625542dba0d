import Foundation
import HTTPServer
import Postgres

/// A feed page's JSON body, written straight from the page query's rows: each field's text is escaped into the
/// body as it arrives from Postgres, with no `FeedItem` decoded and no `JSONEncoder` in between. The bytes are those
/// of `PageBody<FeedItem>` encoded by `JSON.encode` (keys sorted, `null` for a missing link, RFC 3339 timestamps),
/// except that times keep every microsecond Postgres stored (a `Date` can round one away).
enum FeedPageBody {
    /// The body of the page in `rows`, which the page query read with one item more than `limit` (that item, when
    /// present, only says that more follow). A feed without items is one row whose item columns are NULL.
    static func encode(_ rows: PostgresRows, limit: Int) throws -> SharedBytes {
        try encode(rows, in: rows.indices, limit: limit)
    }

    /// The body of the page in `rows[range]` (one page's rows of a batched read), as ``encode(_:limit:)``.
    static func encode(_ rows: PostgresRows, in range: Range<Int>, limit: Int) throws -> SharedBytes {
        let id = try rows.column("id"), title = try rows.column("title"), body = try rows.column("body")
        let url = try rows.column("url"), imageURL = try rows.column("image_url")
        let publishedAt = try rows.column("published_at"), updatedAt = try rows.column("updated_at")
        let itemCount = !range.isEmpty && !rows[range.lowerBound].isNull("id") ? range.count : 0
        let hasMore = itemCount > limit
        let shown = min(itemCount, limit)
        var json = JSONBytes(capacity: 64 + shown * 640)
        json.raw(#"{"has_more":"#)
        json.bool(hasMore)
        json.raw(#","items":["#)
        var cursor: FeedCursor?
        for index in 0 ..< shown {
            let row = rows[range.lowerBound + index]
            json.raw(index == 0 ? #"{"body":"# : #",{"body":"#)
            row.withText(body) { json.stringOrNull($0) }
            json.raw(#","id":"#)
            row.withText(id) { json.stringOrNull($0) }
            json.raw(#","image_url":"#)
            row.withText(imageURL) { json.stringOrNull($0) }
            json.raw(#","published_at":"#)
            try timestamp(row, publishedAt, into: &json)
            json.raw(#","title":"#)
            row.withText(title) { json.stringOrNull($0) }
            json.raw(#","updated_at":"#)
            try timestamp(row, updatedAt, into: &json)
            json.raw(#","url":"#)
            row.withText(url) { json.stringOrNull($0) }
            json.raw("}")
            if hasMore && index == shown - 1 {
                let published = try row.decode(publishedAt, as: PostgresTimestamp.self)
                cursor = FeedCursor(micros: published.microsecondsSince1970, id: try row.decode(id, as: UUID.self))
            }
        }
        json.raw(#"],"next_cursor":"#)
        json.stringOrNull(cursor?.encoded)
        json.raw("}")
        return json.sharedBytes
    }

    /// Writes the row's timestamp as a quoted RFC 3339 string: its text rearranged when it has the usual shape,
    /// else through its exact microseconds.
    private static func timestamp(_ row: PostgresRow, _ column: PostgresColumn, into json: inout JSONBytes) throws {
        var written = false
        row.withText(column) { text in
            guard let text else { return }
            written = PostgresTimestamp.withRFC3339(postgresText: text) { json.quoted($0) }
        }
        if !written { json.timestamp(microsecondsSince1970: try row.decode(column, as: PostgresTimestamp.self).microsecondsSince1970) }
    }
}
