/// The JSON body of one page of a list: `{"items": […], "next_cursor": …, "has_more": …}`.
///
/// `next_cursor` is always present, `null` on the last page, so clients can rely on the shape.
public struct PageBody<Item: Encodable>: Encodable {
    /// The page's items, in the list's order.
    public let items: [Item]
    /// Continues after the page's last item; nil (encoded as `null`) on the last page.
    public let nextCursor: String?
    /// Whether more items follow this page.
    public let hasMore: Bool

    /// A page of `items`; `nextCursor` continues after the last one when there are more.
    public init(items: [Item], nextCursor: String?, hasMore: Bool) {
        self.items = items
        self.nextCursor = nextCursor
        self.hasMore = hasMore
    }

    /// The page of `rows` read with a limit of `limit + 1`: the extra row, when present, only says that more
    /// exist, and the cursor then continues after the page's last row.
    public init<Row>(overfetched rows: [Row], limit: Int, item: (Row) -> Item, cursor: (Row) -> String) {
        let page = rows.prefix(limit)
        let hasMore = rows.count > limit
        self.init(items: page.map(item), nextCursor: hasMore ? page.last.map(cursor) : nil, hasMore: hasMore)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
        try container.encode(hasMore, forKey: .hasMore)
    }

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor", hasMore = "has_more"
    }
}
