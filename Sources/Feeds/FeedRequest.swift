import Accounts
import Foundation
import HTTPServer

/// Reads and validates feed requests' parameters and bodies, naming the offending one in a 400.
enum FeedRequest {
    static func address(_ request: Request, _ principal: Principal) throws -> FeedAddress {
        let key = request.parameter("key")
        guard FeedAddress.isValidKey(key) else {
            throw Problem.badRequest("key must be 1 to 100 of A-Z a-z 0-9 . _ -", parameter: "key")
        }
        return FeedAddress(tenantID: principal.tenantID, key: key)
    }

    static func pageKey(_ request: Request, _ principal: Principal) throws -> FeedPageKey {
        let feed = try address(request, principal)
        let limit = try request.integerQuery("limit", default: 20, in: 1 ... 100)
        let cursor = try request.parsedQuery("cursor") { FeedCursor(encoded: $0) }
        return FeedPageKey(feed: feed, limit: limit, cursor: cursor)
    }

    struct ItemBody: RequestBody {
        let title: String
        let body: String?
        let url: String?
        let image_url: String?
        let published_at: Date?
        enum CodingKeys: String, CodingKey, CaseIterable { case title, body, url, image_url, published_at }
    }

    static func newItem(_ request: Request) throws -> FeedStore.NewItem {
        let body = try request.decodeJSON(ItemBody.self)
        try checkTitle(body.title)
        if let text = body.body { try checkBody(text) }
        if let url = body.url { try checkURL(url, "url") }
        if let url = body.image_url { try checkURL(url, "image_url") }
        return FeedStore.NewItem(title: body.title, body: body.body ?? "", url: body.url, imageURL: body.image_url,
                                 publishedAt: body.published_at)
    }

    /// A PATCH body: present fields change, `null` clears `url`/`image_url`, absent fields stay.
    static func changes(_ request: Request) throws -> FeedStore.Changes {
        _ = try request.decodeJSON(PatchShape.self)
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            throw Problem.badRequest("The body must be a JSON object.")
        }
        var changes = FeedStore.Changes()
        for (key, value) in object {
            switch (key, value) {
            case ("title", let text as String): try checkTitle(text); changes.title = text
            case ("body", let text as String): try checkBody(text); changes.body = text
            case ("url", is NSNull): changes.clearURL = true
            case ("url", let text as String): try checkURL(text, "url"); changes.url = text
            case ("image_url", is NSNull): changes.clearImageURL = true
            case ("image_url", let text as String): try checkURL(text, "image_url"); changes.imageURL = text
            case ("published_at", let text as String):
                guard let date = RFC3339.date(from: text) else {
                    throw Problem.badRequest("published_at must be an RFC 3339 date-time.", parameter: "published_at")
                }
                changes.publishedAt = date
            default:
                throw Problem.badRequest("'\(key)' cannot be changed, or has the wrong type.", parameter: key)
            }
        }
        return changes
    }

    /// Only to reject non-JSON bodies, content types and unknown fields with the standard problems.
    private struct PatchShape: RequestBody {
        enum CodingKeys: String, CodingKey, CaseIterable { case title, body, url, image_url, published_at }
        init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: CodingKeys.self) }
    }

    static func checkTitle(_ title: String) throws {
        try Problem.requireLength(title, of: "title", in: 1 ... 500)
    }

    static func checkBody(_ body: String) throws {
        try Problem.requireLength(body, of: "body", in: 0 ... 20_000)
    }

    static func checkURL(_ text: String, _ field: String) throws {
        guard text.utf8.count <= 2048, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "https" || scheme == "http", url.host != nil else {
            throw Problem.badRequest("\(field) must be an absolute http(s) URL of at most 2,048 bytes.", parameter: field)
        }
    }
}
