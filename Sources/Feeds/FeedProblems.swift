import HTTPServer

// The one place where the feeds domain's errors become problem responses (RFC 9457).

extension FeedError: ProblemConvertible {
    /// 404, naming the feed's key or saying the item is unknown.
    public var problem: Problem {
        switch self {
        case .noSuchFeed(let feed): .notFound("No feed '\(feed.key)'.")
        case .noSuchItem: .notFound("No such item.")
        }
    }
}
