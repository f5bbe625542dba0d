import Testing
import TestSupport
@testable import Crypto

@Suite("SHA-256 in pieces", .timeLimit(.minutes(1)))
struct SHA256StreamTests {
    /// FIPS 180-4's examples, and any split of a random message, give the one-shot digest.
    @Test func piecesGiveTheWholeDigest() {
        let abc = SHA256Stream()
        abc.update(Array("a".utf8))
        abc.update([])
        abc.update(Array("bc".utf8))
        #expect(abc.finish() == Hex.bytes("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(SHA256Stream().finish() == Hex.bytes("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        var random = SplitMix64(seed: 11)
        for _ in 0 ..< 50 {
            let message = (0 ..< Int(random.next() % 5000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let stream = SHA256Stream()
            var offset = 0
            while offset < message.count {
                let count = min(message.count - offset, 1 + Int(random.next() % 700))
                stream.update(Array(message[offset ..< offset + count]))
                offset += count
            }
            #expect(stream.finish() == SHA256.hash(message))
        }
    }
}
