import Testing
import TestSupport
@testable import Crypto

@Suite("AES-256-GCM", .timeLimit(.minutes(1)))
struct AES256GCMTests {
    /// The 256-bit test cases 13, 14 and 16 of McGrew and Viega's "The Galois/Counter Mode of Operation", Appendix B.
    @Test(arguments: [
        ("0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "", "", "",
         "530f8afbc74536b9a963b4f1c4cb738b"),
        ("0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "",
         "00000000000000000000000000000000", "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"),
        ("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"),
    ])
    func publishedVectors(key: String, nonce: String, additional: String, plain: String, sealed: String, tag: String) throws {
        let cipher = try #require(AES256GCM(key: Hex.bytes(key)))
        let nonce = Hex.bytes(nonce), additional = Hex.bytes(additional)
        let output = cipher.seal(Hex.bytes(plain), nonce: nonce, authenticating: additional)
        #expect(output == nonce + Hex.bytes(sealed) + Hex.bytes(tag))
        #expect(cipher.open(output, authenticating: additional) == Hex.bytes(plain))
    }

    /// Any change to the sealed bytes, the additional data or the key is refused; a fresh nonce each time means the
    /// same plaintext never seals to the same bytes.
    @Test func forgeriesAreRefused() throws {
        var generator = SeededBytes(seed: 7)
        let key = generator.next(32)
        let cipher = try #require(AES256GCM(key: key))
        let other = try #require(AES256GCM(key: generator.next(32)))
        for length in [0, 1, 15, 16, 17, 100] {
            let plain = generator.next(length)
            let sealed = cipher.seal(plain, authenticating: Array("tenant".utf8))
            #expect(sealed.count == plain.count + AES256GCM.overhead)
            #expect(cipher.seal(plain, authenticating: Array("tenant".utf8)) != sealed)
            #expect(cipher.open(sealed, authenticating: Array("tenant".utf8)) == plain)
            #expect(cipher.open(sealed, authenticating: Array("tenanT".utf8)) == nil)
            #expect(other.open(sealed, authenticating: Array("tenant".utf8)) == nil)
            for index in sealed.indices {
                var altered = sealed
                altered[index] ^= UInt8(1 << (index % 8))
                #expect(cipher.open(altered, authenticating: Array("tenant".utf8)) == nil)
            }
            #expect(cipher.open(Array(sealed.dropLast()), authenticating: Array("tenant".utf8)) == nil)
        }
        #expect(cipher.open([]) == nil)
        #expect(AES256GCM(key: Array(key.prefix(31))) == nil)
    }
}

/// Deterministic bytes for tests.
struct SeededBytes {
    var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }
    mutating func next(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8.random(in: .min ... .max, using: &generator) } }
}
