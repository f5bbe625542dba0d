import MediaFixtures
import MediaSafety
import TestSupport
import Testing

/// What `MediaSniffer` makes of first bytes, and how declared types compare.
@Suite(.timeLimit(.minutes(1))) struct DetectionTests {
    private func detect(_ bytes: [UInt8], complete: Bool = false) -> MediaSniffer.Verdict {
        MediaSniffer.detect(Array(bytes.prefix(MediaSniffer.prefixLength)), complete: complete)
    }

    private func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let payload = Bytes.ascii(major) + Bytes.be32(0) + compatible.flatMap(Bytes.ascii)
        return Bytes.be32(8 + payload.count) + Bytes.ascii("ftyp") + payload + Bytes.random(64, seed: 7)
    }

    @Test(arguments: Fixture.all) func everyFixtureIsDetected(_ fixture: Fixture) {
        #expect(detect(fixture.bytes) == .type(fixture.type))
        // The whole file, complete: what lies past the prefix is ignored.
        #expect(MediaSniffer.detect(fixture.bytes, complete: true) == .type(fixture.type))
    }

    @Test func isoBaseMediaBrands() {
        #expect(detect(ftyp("heic", ["mif1", "heic"])) == .type(.heic))
        #expect(detect(ftyp("mif1", ["mif1", "miaf", "MiHB", "heic"])) == .type(.heic))
        #expect(detect(ftyp("heix", [])) == .type(.heic))
        #expect(detect(ftyp("mif1", ["mif1", "miaf"])) == .type(.heif))
        #expect(detect(ftyp("msf1", ["msf1", "iso8"])) == .type(.heif))
        #expect(detect(ftyp("avif", ["avif", "mif1", "miaf"])) == .unknown)
        #expect(detect(ftyp("mif1", ["avif", "mif1"])) == .unknown)
        #expect(detect(ftyp("isom", ["isom", "mp41"])) == .unknown)
        #expect(detect(ftyp("qt  ", [])) == .unknown)
    }

    @Test func shortPrefixesWaitUnlessASignatureMatched() {
        #expect(detect([]) == .needMore)
        #expect(detect([0xFF, 0xD8]) == .needMore)
        #expect(detect([0xFF, 0xD8, 0xFF]) == .type(.jpeg))
        #expect(detect(Bytes.ascii("GIF89")) == .needMore)
        #expect(detect(Bytes.ascii("GIF89a")) == .type(.gif))
        #expect(detect(Bytes.ascii("%PDF-")) == .type(.pdf))
        #expect(detect(Bytes.ascii("Hello")) == .needMore)
        #expect(detect(Array(HEIFFixture.ftyp.prefix(20))) == .needMore)
        // The whole file, short.
        #expect(detect(Bytes.ascii("Hello"), complete: true) == .type(.text))
        #expect(detect(Bytes.ascii("GIF8"), complete: true) == .type(.text))  // only text, then
        #expect(detect([0xFF, 0xD8], complete: true) == .unknown)
        #expect(detect([], complete: true) == .unknown)
    }

    @Test func text() {
        let line = Bytes.ascii(String(repeating: "Ceci est une question, merci. ", count: 3))
        #expect(detect(line) == .type(.text))
        #expect(detect([0xEF, 0xBB, 0xBF] + line) == .type(.text))  // a byte-order mark
        #expect(detect(Bytes.ascii("col1\tcol2\r\nnext page\u{0C}") + line) == .type(.text))
        #expect(detect(Bytes.ascii("abc") + [0] + line) == .unknown)  // NUL
        #expect(detect(Bytes.ascii("abc") + [0x1B] + line) == .unknown)  // ESC
        #expect(detect(Bytes.ascii("abc") + [0xC0, 0xAF] + line) == .unknown)  // overlong
        #expect(detect(Bytes.ascii("abc") + [0xED, 0xA0, 0x80] + line) == .unknown)  // surrogate
        // A character cut by the prefix's end is fine while more may come, not when it is the file's end.
        let cut = Array(line.prefix(MediaSniffer.prefixLength - 1)) + [0xE2]
        #expect(MediaSniffer.detect(cut, complete: false) == .type(.text))
        #expect(MediaSniffer.detect(cut + [0x82, 0xAC], complete: false) == .type(.text))
        #expect(MediaSniffer.detect(Bytes.ascii("prix 5 ") + [0xE2, 0x82], complete: true) == .unknown)
        #expect(MediaSniffer.detect(Bytes.ascii("prix 5 ") + [0xE2, 0x82, 0xAC], complete: true) == .type(.text))
    }

    @Test func randomBinaryIsUnknown() {
        for seed in 0 ..< 100 as Range<UInt64> {
            let bytes = Bytes.random(MediaSniffer.prefixLength, seed: seed)
            #expect(detect(bytes) == .unknown, "seed \(seed)")
        }
    }

    @Test func declaredTypes() {
        #expect(MediaType(declared: "image/jpeg") == .jpeg)
        #expect(MediaType(declared: "IMAGE/JPEG; q=0.9") == .jpeg)
        #expect(MediaType(declared: "image/jpg") == .jpeg)
        #expect(MediaType(declared: " text/plain ; charset=utf-8") == .text)
        #expect(MediaType(declared: "Image/HEIC") == .heic)
        #expect(MediaType(declared: "image/heif-sequence") == .heif)
        #expect(MediaType(declared: "application/pdf") == .pdf)
        #expect(MediaType(declared: "image/avif") == nil)
        #expect(MediaType(declared: "application/octet-stream") == nil)
        #expect(MediaType(declared: "") == nil)
        #expect(MediaType(declared: ";image/png") == nil)
        for type in MediaType.allCases { #expect(MediaType(declared: type.rawValue) == type) }
    }

    @Test func detectedSatisfiesDeclared() {
        #expect(MediaType.jpeg.satisfies(.jpeg))
        #expect(!MediaType.jpeg.satisfies(.png))
        #expect(MediaType.heic.satisfies(.heif) && MediaType.heif.satisfies(.heic))
        #expect(!MediaType.text.satisfies(.pdf))
        #expect(MediaType.allCases.filter(\.isImage) == [.jpeg, .png, .webp, .heic, .heif, .gif])
    }
}
