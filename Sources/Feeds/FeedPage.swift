import HTTPServer

/// One page of a feed, encoded once and served as bytes until the feed changes.
public struct FeedPage: Sendable {
    /// The JSON body, `{"items": […], "next_cursor": …, "has_more": …}`, which every response serving this page sends
    /// from where it is.
    public let bytes: SharedBytes
    /// The strong entity tag of this page (depends on the feed's version and the page's parameters).
    public let etag: String
    /// The header fields of a response sending this page (its tag, caching and type), made once and shared by every
    /// such response.
    var headers: HTTPHeaders { response.headers }
    private let response: ResponseFields

    init(bytes: SharedBytes, etag: String) {
        self.bytes = bytes
        self.etag = etag
        var headers = HTTPHeaders(capacity: 3)
        headers.add("ETag", etag)
        headers.add("Cache-Control", FeedPage.cacheControl)
        headers.add("Content-Type", "application/json")
        response = ResponseFields(headers: HTTPHeaders(sharing: headers))
    }

    /// A page's response fields in a class of their own: a page is copied out of the cache on every read, and a copy
    /// then retains one reference rather than copying a header list.
    private final class ResponseFields: Sendable {
        let headers: HTTPHeaders

        init(headers: HTTPHeaders) {
            self.headers = headers
        }
    }

    /// Every page response's `Cache-Control`: kept by the client, revalidated before each use.
    static let cacheControl = "private, no-cache"

    /// The JSON body as an array (a copy).
    public var body: [UInt8] { bytes.array }
}

/// What a page load found.
public enum FeedPageResult: Sendable {
    /// The feed exists; here is the page.
    case page(FeedPage)
    /// The tenant has no feed with that key.
    case noSuchFeed
}

/// Which page of which feed.
public struct FeedPageKey: Sendable, Hashable {
    /// The feed the page belongs to.
    public let feed: FeedAddress
    /// The most items the page holds.
    public let limit: Int
    /// The page starts after this position; nil for the newest items.
    public let cursor: FeedCursor?

    /// The page of `feed` with at most `limit` items, after `cursor` (nil: the newest).
    public init(feed: FeedAddress, limit: Int, cursor: FeedCursor?) {
        self.feed = feed
        self.limit = limit
        self.cursor = cursor
    }
}

/// A 64-bit FNV-1a hash, for short entity tags (not for security).
enum FNV1a {
    static func hash(_ text: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        return value
    }
}

/// The position after the last item of a feed page: that item's `(published_at, id)`.
public typealias FeedCursor = KeysetCursor
