import HTTPServer

/// Random bearer secrets: API keys (`sbk_…`) and session tokens (`sbs_…`).
///
/// 32 bytes from the system CSPRNG (`SystemRandomNumberGenerator`, i.e. `getrandom(2)`), base64url without
/// padding. Only their SHA-256 is stored (computed by Postgres's `sha256()`); the secret is shown once.
public enum SecretToken {
    /// The kind of secret, told apart by its prefix.
    public enum Kind: String, Sendable {
        case apiKey = "sbk_"
        case session = "sbs_"
    }

    /// A new secret of `kind`.
    public static func generate(_ kind: Kind) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = generator.next() }
        return kind.rawValue + Base64URL.encode(bytes)
    }

    /// The kind of a presented secret, or nil when it has neither shape.
    public static func kind(of token: String) -> Kind? {
        // Checked over the token's bytes in place when it has them (every request presents one).
        if let kind = token.utf8.withContiguousStorageIfAvailable(kind(of:)) { return kind }
        return kind(of: Array(token.utf8))
    }

    /// The kind of a secret given as its UTF-8 bytes: `sbk_` or `sbs_`, then 43 base64url characters.
    static func kind<Bytes: RandomAccessCollection<UInt8>>(of bytes: Bytes) -> Kind? where Bytes.Index == Int {
        guard let kind = kind(byPrefixOf: bytes) else { return nil }
        for index in (bytes.startIndex + 4) ..< bytes.endIndex where !Base64URL.isAlphabet(bytes[index]) { return nil }
        return kind
    }

    /// The kind that a secret's length and prefix name, its other 43 characters unchecked: enough for a secret
    /// already known to be well formed (one found in the token cache, where only well-formed secrets go).
    static func kind<Bytes: RandomAccessCollection<UInt8>>(byPrefixOf bytes: Bytes) -> Kind? where Bytes.Index == Int {
        guard bytes.count == 47 else { return nil }
        let start = bytes.startIndex
        guard bytes[start] == UInt8(ascii: "s"), bytes[start + 1] == UInt8(ascii: "b"),
              bytes[start + 3] == UInt8(ascii: "_") else { return nil }
        switch bytes[start + 2] {
        case UInt8(ascii: "k"): return .apiKey
        case UInt8(ascii: "s"): return .session
        default: return nil
        }
    }
}
