import Coordination
import Crypto
import Foundation

/// An endpoint's signing secret, `whsec_<base64 of 32 random bytes>` as Standard Webhooks spells it: the HMAC key is
/// the base64-decoded part after the prefix (not the text itself, which is what receivers most often get wrong).
public struct WebhookSecret: Sendable, Hashable {
    /// The text shown to the tenant (once, at creation and on rotation).
    public let text: String
    /// The HMAC key.
    public let key: [UInt8]

    static let prefix = "whsec_"

    /// A fresh secret from the system's CSPRNG.
    public static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0 ..< 32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return WebhookSecret(key: bytes)
    }

    /// The secret of `key`.
    public init(key: [UInt8]) {
        self.key = key
        self.text = WebhookSecret.prefix + Data(key).base64EncodedString()
    }

    /// Parses a stored `whsec_…` text; nil when it is not one.
    public init?(text: String) {
        guard text.hasPrefix(WebhookSecret.prefix),
              let data = Data(base64Encoded: String(text.dropFirst(WebhookSecret.prefix.count))), !data.isEmpty else {
            return nil
        }
        self.text = text
        self.key = [UInt8](data)
    }
}

/// Signs a webhook as Standard Webhooks defines: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per
/// secret, separated by spaces (during a rotation's overlap both the new and the old secret sign).
public enum WebhookSignature {
    /// The `webhook-signature` header value for `body` sent as message `id` at `timestamp` (Unix seconds).
    public static func header(id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]) -> String {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        return signed.withUnsafeBytes { signed in
            secrets.map { secret in
                "v1," + Data(readyKey(for: secret).authenticationCode(for: signed)).base64EncodedString()
            }.joined(separator: " ")
        }
    }

    /// The most secrets whose ready keys are kept (the least recently used go first).
    static let readyKeyLimit = 1024

    /// Guards the ready keys of the secrets that signed lately, by key: an endpoint's secret signs each of its
    /// deliveries, and a ready key spares each of them libcrypto's set-up and the hashing of the key.
    private static let readyKeys = Locked(LRUCache<[UInt8], HMACSHA256Key>(capacity: readyKeyLimit))

    /// `secret`'s ready key, made on first use.
    static func readyKey(for secret: WebhookSecret) -> HMACSHA256Key {
        if let ready = readyKeys.withLock({ $0.value(for: secret.key) }) { return ready }
        let ready = HMACSHA256Key(secret.key)
        readyKeys.withLock { $0.insert(ready, for: secret.key, expiry: nil) }
        return ready
    }
}
