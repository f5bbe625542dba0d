import Accounts
import Foundation

/// One item of a feed, as the API shows it.
public struct FeedItem: Sendable, Codable, Equatable {
    /// The item's id (a lower-case UUID).
    public var id: String
    /// The headline (1–500 characters).
    public var title: String
    /// The item's text; empty when none was given.
    public var body: String
    /// The link the item points to (an absolute http(s) URL); nil when it has none.
    public var url: String?
    /// An image to show with the item (an absolute http(s) URL); nil when it has none.
    public var imageURL: String?
    /// The publication time, which orders the feed (newest first); the creation time unless the writer set one.
    public var publishedAt: Date
    /// When the item was created or last changed.
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, title, body, url
        case imageURL = "image_url", publishedAt = "published_at", updatedAt = "updated_at"
    }

    /// Encodes `url` and `imageURL` as null when absent, so every item has the same shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(body, forKey: .body)
        try container.encode(url, forKey: .url)
        try container.encode(imageURL, forKey: .imageURL)
        try container.encode(publishedAt, forKey: .publishedAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// A feed's address: its tenant and key.
public struct FeedAddress: Sendable, Hashable {
    /// The tenant that owns the feed.
    public let tenantID: UUID
    /// The feed's key within its tenant (see ``isValidKey(_:)``).
    public let key: String
    /// The tenant's and key's hash (seeded per process, as `Hasher` is), taken once: a read looks its page up by it
    /// and then its feed's change count (whose slot it picks as it is), and hashed the address afresh each time.
    let hash: Int

    /// The address of feed `key` of `tenantID`.
    public init(tenantID: UUID, key: String) {
        self.tenantID = tenantID
        self.key = key
        var hasher = Hasher()
        hasher.combine(tenantID)
        hasher.combine(key)
        hash = hasher.finalize()
    }

    public static func == (a: FeedAddress, b: FeedAddress) -> Bool {
        a.hash == b.hash && a.tenantID == b.tenantID && a.key == b.key
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// The payload of a cross-replica change notice (ids only): `tenant:key:nonce`, the nonce making each
    /// write's notice unique so its writer can recognise it coming back.
    public func notice(nonce: String) -> String { tenantID.lowercased + ":" + key + ":" + nonce }

    /// Parses a change notice.
    public init?(notice: String) {
        let parts = notice.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let tenant = UUID(uuidString: String(parts[0])), FeedAddress.isValidKey(String(parts[1])) else {
            return nil
        }
        self.init(tenantID: tenant, key: String(parts[1]))
    }

    /// Whether `key` is a valid feed key: 1–100 of `A–Z a–z 0–9 . _ -`.
    public static func isValidKey(_ key: String) -> Bool {
        // Over the bytes in place (every feed read checks its key): the UTF-8 view's iterator cost tens of
        // instructions a byte.
        var key = key
        return key.withUTF8 { bytes in
            (1 ... 100).contains(bytes.count) && bytes.allSatisfy { byte in
                (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57)
                    || byte == 46 || byte == 95 || byte == 45
            }
        }
    }
}
