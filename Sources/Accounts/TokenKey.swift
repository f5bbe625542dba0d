#if canImport(Glibc)
import Glibc
#endif
import HTTPServer

/// A bearer secret as the token cache's key: hashed as one run of bytes, and read where it was presented.
///
/// A secret is 47 bytes, and every request's is hashed to find its record; as a `String` it went to the hasher a byte
/// at a time. This still hashes every byte through `Hasher`, seeded per process, so secrets a client chooses cannot be
/// made to collide in the cache. A key for a lookup is made over the `Authorization` header's value where the server
/// read it (the secret's bytes within it), so that a request whose secret is cached copies it nowhere. The bytes are
/// hashed once, as the key is made: a lookup made under the cache's lock (which the server's threads share) then hashes
/// a word, not the secret.
struct TokenKey: Hashable, Sendable {
    /// The text the secret lies in: the secret itself, or the header's value it was presented in (in place in the
    /// request's head, so that a request whose secret is cached makes no string of it).
    private let text: FieldValue
    /// Where the secret lies in `text`'s bytes.
    private let bytes: Range<Int>
    /// The secret's bytes through `Hasher`, taken when the key is made.
    private let digest: Int

    /// The key of `token`, all of it.
    init(token: String) {
        self.init(in: FieldValue(token), bytes: 0 ..< token.utf8.count)
    }

    /// The key of the secret at `bytes` of the header value `text` (which must lie within it).
    init(in text: FieldValue, bytes: Range<Int>) {
        precondition(bytes.lowerBound >= 0 && bytes.upperBound <= text.count, "the secret lies outside its text")
        self.text = text
        self.bytes = bytes
        // All the bytes in one call: the hasher takes them eight at a time, with the count in its last block.
        digest = text.withBytes { text in
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(text)[bytes]))
            return hasher.finalize()
        }
    }

    /// The secret as a string of its own.
    var token: String { TokenKey.secret(at: bytes, in: text) }

    /// The secret at `bytes` of `text`'s bytes as a string of its own (`text`'s own string when it is all of it).
    static func secret(at bytes: Range<Int>, in text: FieldValue) -> String {
        bytes.count == text.count ? text.text : text.withBytes { String(decoding: $0[bytes], as: UTF8.self) }
    }

    /// Calls `body` with the secret's bytes, in place.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        text.withBytes { body(UnsafeBufferPointer(rebasing: $0[bytes])) }
    }

    static func == (a: TokenKey, b: TokenKey) -> Bool {
        guard a.digest == b.digest, a.bytes.count == b.bytes.count else { return false }
        return a.withBytes { x in b.withBytes { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }
}
