import Coordination
import Crypto
import Foundation
import Postgres

/// Short-lived signed download URLs for attachments (`/v1/attachments/{id}?expires=…&signature=…`), which work without
/// credentials until they expire: what an export hands out, so its reader can fetch the files. The signature is an
/// HMAC-SHA256 of the id and the expiry under a key every replica shares (made once, kept in `service_keys`).
public struct DownloadLinks: Sendable {
    let pool: PostgresPool
    /// The key once read: it never changes, so every link after the first is checked without the database.
    private let cached = Locked<[UInt8]?>(nil)
    /// How long a link works.
    public static let lifetime: TimeInterval = 3600

    /// Links over `pool` (which holds the shared key).
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The shared key, made by the first replica that needs it.
    func key() async throws -> [UInt8] {
        if let key = cached.withLock({ $0 }) { return key }
        let key = try await pool.withConnection { connection in
            try await ServiceKeys.key(named: "attachment_links", on: connection)
        }
        cached.withLock { $0 = key }
        return key
    }

    /// The signed path of attachment `id` under `key`, working until `expires` (seconds since 1970).
    static func path(of id: String, expires: Int, key: [UInt8]) -> String {
        "/v1/attachments/\(id)?expires=\(expires)&signature=\(signature(of: id, expires: expires, key: key))"
    }

    static func signature(of id: String, expires: Int, key: [UInt8]) -> String {
        Base16.encode(HMACSHA256.authenticationCode(for: Array("attachment-link\n\(id)\n\(expires)".utf8), key: key))
    }

    /// Whether `signature` signs `id` until `expires`, and that time has not come (nor lies beyond a link's lifetime).
    static func isValid(id: String, expires: Int, signature: String, key: [UInt8], now: Date = Date()) -> Bool {
        let seconds = Int(now.timeIntervalSince1970)
        guard expires > seconds, expires <= seconds + Int(lifetime) + 60, signature.utf8.count == 64 else { return false }
        let expected = Array(Self.signature(of: id, expires: expires, key: key).utf8)
        var difference: UInt8 = 0
        for (a, b) in zip(expected, Array(signature.lowercased().utf8)) { difference |= a ^ b }
        return difference == 0
    }
}
