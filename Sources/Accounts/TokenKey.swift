/// A bearer secret as the token cache's key: hashed eight bytes at a time.
///
/// A secret is 47 bytes, and every request's is hashed to find its record; as a `String` it went to the hasher a byte
/// at a time. This still hashes every byte through `Hasher`, seeded per process, so secrets a client chooses cannot be
/// made to collide in the cache.
struct TokenKey: Hashable, Sendable {
    let token: String

    static func == (a: TokenKey, b: TokenKey) -> Bool {
        a.token == b.token
    }

    func hash(into hasher: inout Hasher) {
        var token = token
        token.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var offset = 0
            while offset + 8 <= raw.count {
                hasher.combine(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            var tail = UInt64(raw.count) << 56
            for index in offset ..< raw.count { tail |= UInt64(raw[index]) << (8 * (index - offset)) }
            hasher.combine(tail)
        }
    }
}
