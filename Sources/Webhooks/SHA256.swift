/// SHA-256 (FIPS 180-4), for webhook signatures: small, allocation-light, and checked against the standard's test
/// vectors. Not constant-time with respect to the message length (nothing here needs that).
public struct SHA256: Sendable {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    /// An empty hash; feed it with ``update(_:)``.
    public init() { buffer.reserveCapacity(64) }

    /// The digest of `bytes` in one call.
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Adds `bytes` to the message.
    public mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            buffer.append(byte)
            if buffer.count == 64 {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
            length &+= 1
        }
    }

    /// The 32-byte digest; the hasher is spent afterwards.
    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        for start in stride(from: 0, to: tail.count, by: 64) { compress(tail[start ..< start + 64]) }
        buffer.removeAll()
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                       UInt8(truncatingIfNeeded: word)]
        }
        return digest
    }

    private mutating func compress(_ block: some Collection<UInt8>) {
        var w = [UInt32](repeating: 0, count: 64)
        var index = block.startIndex
        for t in 0 ..< 16 {
            var word: UInt32 = 0
            for _ in 0 ..< 4 {
                word = word << 8 | UInt32(block[index])
                index = block.index(after: index)
            }
            w[t] = word
        }
        for t in 16 ..< 64 {
            let s0 = w[t - 15].rotatedRight(7) ^ w[t - 15].rotatedRight(18) ^ (w[t - 15] >> 3)
            let s1 = w[t - 2].rotatedRight(17) ^ w[t - 2].rotatedRight(19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = state
        for t in 0 ..< 64 {
            let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ choice &+ SHA256.k[t] &+ w[t]
            let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d,
                 state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { self >> count | self << (32 - count) }
}

/// HMAC-SHA256 (RFC 2104), checked against RFC 4231's test cases.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: some Sequence<UInt8>, key: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
