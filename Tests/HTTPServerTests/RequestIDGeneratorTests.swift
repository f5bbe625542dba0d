@testable import HTTPServer
import TestSupport
import Testing

/// Request ids are written by hand (they are made for every request): they must read exactly as the standard
/// library's hex formatting would, and never repeat.
@Suite(.timeLimit(.minutes(5))) struct RequestIDGeneratorTests {
    @Test func idsAreThePrefixADashAndTheCounterInLowercaseHex() {
        var rng = SplitMix64(seed: 16)
        let edges: [UInt64] = [0, 1, 9, 10, 15, 16, 255, 256, UInt64(UInt32.max), UInt64.max - 1, UInt64.max]
        for n in edges + (0 ..< 2_000).map({ _ in rng.next() >> (rng.next() % 64) }) {
            let prefix = rng.next()
            let expected = String(prefix, radix: 16) + "-" + String(n, radix: 16)
            #expect(RequestIDGenerator.format(Array((String(prefix, radix: 16) + "-").utf8), n) == expected)
        }
    }

    @Test func successiveIdsDifferAndAreSane() {
        let generator = RequestIDGenerator(prefix: 0xabc)
        let ids = (0 ..< 1_000).map { _ in generator.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.first == "abc-1")
        #expect(ids.allSatisfy(RequestIDMiddleware.isSane))
    }

    @Test func idsOfAProcesssFirstSixteenMillionRequestsFitInFifteenBytes() {
        let widest = Array((String(UInt32.max, radix: 16) + "-").utf8)
        #expect(RequestIDGenerator.format(widest, 0xFF_FFFF).utf8.count == 15)
        #expect(RequestIDGenerator.format(widest, 0x100_0000).utf8.count == 16)
        let ids = (0 ..< 100).map { _ in RequestIDGenerator.shared.next() }
        #expect(ids.allSatisfy { $0.utf8.count <= 15 && RequestIDMiddleware.isSane($0) })
    }
}
