#if canImport(Glibc)
import Glibc
#endif

/// A bearer secret as the token cache's key: hashed as one run of bytes, and read where it was presented.
///
/// A secret is 47 bytes, and every request's is hashed to find its record; as a `String` it went to the hasher a byte
/// at a time. This still hashes every byte through `Hasher`, seeded per process, so secrets a client chooses cannot be
/// made to collide in the cache. A key for a lookup is made over the `Authorization` header itself (the secret's bytes
/// within it), so that a request whose secret is cached copies it nowhere. The bytes are hashed once, as the key is made:
/// a lookup made under the cache's lock (which the server's threads share) then hashes a word, not the secret.
struct TokenKey: Hashable, Sendable {
    /// The text the secret lies in: the secret itself, or the header it was presented in.
    private let text: String
    /// Where the secret lies in `text`'s UTF-8.
    private let bytes: Range<Int>
    /// The secret's bytes through `Hasher`, taken when the key is made.
    private let digest: Int

    /// The key of `token`, all of it.
    init(token: String) {
        self.init(in: token, bytes: 0 ..< token.utf8.count)
    }

    /// The key of the secret at `bytes` of `text`'s UTF-8 (which must lie within it).
    init(in text: String, bytes: Range<Int>) {
        precondition(bytes.lowerBound >= 0 && bytes.upperBound <= text.utf8.count, "the secret lies outside its text")
        self.text = text
        self.bytes = bytes
        // All the bytes in one call: the hasher takes them eight at a time, with the count in its last block.
        digest = TokenKey.withBytes(bytes, of: text) { bytes in
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            return hasher.finalize()
        }
    }

    /// The secret as a string of its own.
    var token: String { TokenKey.secret(at: bytes, in: text) }

    /// The secret at `bytes` of `text`'s UTF-8 as a string of its own (`text` itself when it is all of it).
    static func secret(at bytes: Range<Int>, in text: String) -> String {
        bytes.count == text.utf8.count ? text : withBytes(bytes, of: text) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the secret's bytes, in place when the text has contiguous storage (a native string does).
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        TokenKey.withBytes(bytes, of: text, body)
    }

    private static func withBytes<Result>(_ range: Range<Int>, of text: String,
                                          _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable({ body(UnsafeBufferPointer(rebasing: $0[range])) }) {
            return result
        }
        return Array(text.utf8)[range].withUnsafeBufferPointer(body)
    }

    static func == (a: TokenKey, b: TokenKey) -> Bool {
        guard a.digest == b.digest, a.bytes.count == b.bytes.count else { return false }
        return a.withBytes { x in b.withBytes { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }
}
