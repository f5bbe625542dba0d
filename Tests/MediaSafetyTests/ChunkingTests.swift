import MediaFixtures
import MediaSafety
import Testing

/// Where chunks end never changes the outcome.
@Suite(.timeLimit(.minutes(1))) struct ChunkingTests {
    @Test(arguments: Fixture.all) func randomChunksGiveTheSameOutput(_ fixture: Fixture) {
        let whole = Feeding.whole(fixture.bytes, as: fixture.type)
        for seed in 0 ..< 200 as Range<UInt64> {
            let chunked = Feeding.randomly(fixture.bytes, as: fixture.type, seed: seed)
            guard chunked == whole else {
                Issue.record("seed \(seed): \(chunked) differs from \(whole)")
                return
            }
        }
    }

    @Test(arguments: Fixture.all) func byteByByteGivesTheSameOutput(_ fixture: Fixture) {
        let chunks = (0 ..< fixture.bytes.count).map { $0 ..< $0 + 1 }
        let whole = Feeding.whole(fixture.bytes, as: fixture.type)
        #expect(Feeding.run(fixture.bytes, as: fixture.type, chunks: chunks) == whole)
    }

    @Test func dimensionsAreKnownOnceTheHeaderHasPassed() throws {
        var sanitizer = MediaSanitizer(type: .png)
        let bytes = PNGFixture.make().bytes
        #expect(try sanitizer.feed(Array(bytes.prefix(20))).count == 8)  // the signature; IHDR is still gathering
        #expect(sanitizer.dimensions == nil)
        _ = try sanitizer.feed(Array(bytes[20 ..< 40]))
        #expect(sanitizer.dimensions?.width == 300 && sanitizer.dimensions?.height == 200)
    }
}
