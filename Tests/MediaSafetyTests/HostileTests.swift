import MediaFixtures
import MediaSafety
import TestSupport
import Testing

/// Hostile input: mutated and truncated files, and length fields made to lie. Whatever arrives, the sanitiser
/// throws or answers, never traps or hangs, and never returns more than it was given (plus the orientation Exif).
@Suite(.timeLimit(.minutes(1))) struct HostileTests {
    /// Positions likely to hold length fields: next to four-letter codes (PNG, RIFF, ISO-BMFF) and after JPEG markers.
    private static func anchors(_ bytes: [UInt8]) -> [Int] {
        var positions: [Int] = []
        let letter: (UInt8) -> Bool = { (0x41 ... 0x5A).contains($0) || (0x61 ... 0x7A).contains($0) || $0 == 0x20 }
        for index in 0 ..< max(bytes.count - 4, 0) {
            if bytes[index ..< index + 4].allSatisfy(letter) { positions += [index - 4, index + 4] }
            if bytes[index] == 0xFF, bytes[index + 1] > 0xC0, bytes[index + 1] != 0xFF { positions.append(index + 2) }
        }
        return positions.filter { $0 >= 0 && $0 < bytes.count }
    }

    private static func mutate(_ original: [UInt8], anchors: [Int], using generator: inout SplitMix64) -> [UInt8] {
        var bytes = original
        for _ in 0 ..< Int.random(in: 1 ... 3, using: &generator) {
            guard !bytes.isEmpty else { return [UInt8.random(in: 0 ... 255, using: &generator)] }
            let position = Int.random(in: 0 ..< bytes.count, using: &generator)
            switch Int.random(in: 0 ..< 8, using: &generator) {
            case 0:
                bytes[position] ^= 1 << UInt8.random(in: 0 ... 7, using: &generator)
            case 1:
                bytes[position] = UInt8.random(in: 0 ... 255, using: &generator)
            case 2:
                bytes.removeSubrange(position...)
            case 3, 4:  // a length field set to something extreme
                let field = anchors.randomElement(using: &generator) ?? position
                let width = Bool.random(using: &generator) ? 2 : 4
                let values: [UInt8] = [0x00, 0xFF, 0x01, 0x7F, 0x80]
                for offset in 0 ..< width where field + offset < bytes.count {
                    bytes[field + offset] = offset == width - 1 && Bool.random(using: &generator)
                        ? UInt8.random(in: 0 ... 255, using: &generator)
                        : values.randomElement(using: &generator)!
                }
            case 5:
                bytes.insert(contentsOf: Bytes.random(Int.random(in: 1 ... 16, using: &generator),
                                                      seed: generator.next()), at: position)
            case 6:
                let end = min(position + Int.random(in: 1 ... 32, using: &generator), bytes.count)
                bytes.removeSubrange(position ..< end)
            default:
                let end = min(position + Int.random(in: 1 ... 64, using: &generator), bytes.count)
                bytes.insert(contentsOf: bytes[position ..< end], at: position)
            }
        }
        return bytes
    }

    @Test(arguments: Fixture.seeds) func mutationsNeverTrapHangOrGrow(_ fixture: Fixture) {
        var generator = SplitMix64(seed: 0x5EED)
        let anchors = Self.anchors(fixture.bytes)
        var refused = 0
        for round in 0 ..< 2000 {
            let bytes = Self.mutate(fixture.bytes, anchors: anchors, using: &generator)
            let whole = Feeding.whole(bytes, as: fixture.type)
            let chunked = Feeding.randomly(bytes, as: fixture.type, seed: generator.next())
            if whole.error != nil { refused += 1 }
            // Bytes returned before a throw depend on the chunks; everything else must not.
            let same = whole.error == nil ? whole == chunked
                : whole.error == chunked.error && whole.size == chunked.size && whole.removed == chunked.removed
            guard whole.output.count <= bytes.count + 64, chunked.output.count <= bytes.count + 64, same else {
                Issue.record("round \(round): whole \(whole), chunked \(chunked), input \(bytes.count) bytes")
                return
            }
        }
        #expect(refused > 0)  // the mutations do reach the parsers
    }

    /// The files whose end a sanitiser can tell: not text or PDF, nor a JPEG whose EOI has bytes after it.
    static let endMarked = Fixture.all.filter {
        $0.type != .text && $0.type != .pdf && !$0.removed.contains("trailing data")
    }

    @Test(arguments: endMarked) func everyTruncationThrowsAtFinish(_ fixture: Fixture) {
        for length in 0 ..< fixture.bytes.count {
            var sanitizer = MediaSanitizer(type: fixture.type)
            var output: [UInt8] = []
            do {
                output += try sanitizer.feed(Array(fixture.bytes.prefix(length)))
                output += try sanitizer.finish()
                Issue.record("cut at \(length) of \(fixture.bytes.count) was accepted")
                return
            } catch {
                #expect(output.count <= length + 64)
            }
        }
    }

    private func refusal(_ bytes: [UInt8], as type: MediaType) -> MediaError? {
        Feeding.randomly(bytes, as: type, seed: 1).error
    }

    private func isMalformed(_ error: MediaError?) -> Bool {
        if case .malformed = error { true } else { false }
    }

    private func isUnsupported(_ error: MediaError?) -> Bool {
        if case .unsupported = error { true } else { false }
    }

    @Test func jpegLengthsThatLie() {
        let soi: [UInt8] = [0xFF, 0xD8]
        #expect(isMalformed(refusal(soi + [0xFF, 0xE1, 0x00, 0x00], as: .jpeg)))
        #expect(isMalformed(refusal(soi + [0xFF, 0xE1, 0x00, 0x01], as: .jpeg)))
        #expect(isMalformed(refusal(soi + [0xFF, 0xE1, 0xFF, 0xFF] + Bytes.random(100, seed: 2), as: .jpeg)))
        #expect(isMalformed(refusal(soi + JPEGFixture.sos + [1, 2, 3, 0xFF, 0xD9], as: .jpeg)))  // no frame header
        #expect(isMalformed(refusal(soi + [0x00] + JPEGFixture.app0, as: .jpeg)))
        #expect(isMalformed(refusal(soi + JPEGFixture.app0 + [0xFF, 0xD8], as: .jpeg)))
        #expect(isMalformed(refusal(soi + JPEGFixture.sof0 + [0xFF, 0xD9], as: .jpeg)))  // no scan
        #expect(isMalformed(refusal(Bytes.ascii("GIF89a"), as: .jpeg)))
    }

    @Test func pngLengthsThatLie() throws {
        let signature = PNGFixture.signature
        // A length past 2^31-1 is refused as soon as the chunk header arrives, before anything is gathered.
        var sanitizer = MediaSanitizer(type: .png)
        _ = try sanitizer.feed(signature + PNGFixture.ihdr)
        #expect(throws: MediaError.self) { try sanitizer.feed([0xFF, 0xFF, 0xFF, 0xFF] + Bytes.ascii("IDAT")) }
        // A huge (legal) IDAT streams, and the file is found short at the end.
        #expect(isMalformed(refusal(signature + PNGFixture.ihdr + Bytes.be32(0x7FFF_FFFF) + Bytes.ascii("IDAT")
            + Bytes.random(3000, seed: 3), as: .png)))
        var badCRC = PNGFixture.ihdr
        badCRC[badCRC.count - 1] ^= 1
        #expect(isMalformed(refusal(signature + badCRC + PNGFixture.end, as: .png)))
        #expect(isMalformed(refusal(signature + PNGFixture.phys + PNGFixture.ihdr + PNGFixture.end, as: .png)))
        #expect(isMalformed(refusal(signature + PNGFixture.ihdr + PNGFixture.ihdr + PNGFixture.end, as: .png)))
        #expect(isMalformed(refusal(signature + PNGFixture.ihdr + Bytes.be32(4) + [0x49, 0x44, 0x00, 0x54], as: .png)))
    }

    @Test func gifStructureThatLies() {
        let start = GIFFixture.header + GIFFixture.colorTable
        #expect(isMalformed(refusal(start + [0x99, 0x3B], as: .gif)))
        #expect(isMalformed(refusal(start + [0x21, 0xFE, 0xFF] + Bytes.random(100, seed: 4), as: .gif)))
        #expect(isMalformed(refusal(start + GIFFixture.image, as: .gif)))  // no trailer
        #expect(refusal(start + GIFFixture.image + [0x3B], as: .gif) == nil)
    }

    @Test func webpSizesThatLie() {
        let vp8 = WebPFixture.chunk("VP8 ", WebPFixture.lossyPayload)
        func riff(size: Int, _ chunks: [UInt8]) -> [UInt8] {
            Bytes.ascii("RIFF") + Bytes.le32(size) + Bytes.ascii("WEBP") + chunks
        }
        #expect(isMalformed(refusal(riff(size: 0xFFFF_FFFF, vp8), as: .webp)))  // ends early
        #expect(isMalformed(refusal(riff(size: 2, vp8), as: .webp)))
        #expect(isMalformed(refusal(riff(size: 4 + vp8.count - 2, vp8), as: .webp)))  // chunk past the container
        #expect(isMalformed(refusal(riff(size: 4 + 8, Bytes.ascii("EXIF") + Bytes.le32(0xFFFF_FFFF)), as: .webp)))
        // No image: a canvas alone, or no chunk at all.
        #expect(isMalformed(refusal(riff(size: 4 + 18, WebPFixture.extendedHeader(flags: 0)), as: .webp)))
        #expect(isMalformed(refusal(riff(size: 4, []), as: .webp)))
        // Bytes after the RIFF container are dropped; the container itself is kept whole.
        let outcome = Feeding.whole(riff(size: 4 + vp8.count, vp8) + Bytes.ascii("Exif GPS 48.85N"), as: .webp)
        #expect(outcome.error == nil && outcome.output == riff(size: 4 + vp8.count, vp8))
        #expect(outcome.removed == ["trailing data"])
    }

    @Test func heifBoxesThatLie() {
        let ftyp = HEIFFixture.ftyp
        let mdat = HEIFFixture.box("mdat", HEIFFixture.hevc)
        let (good, _, _) = HEIFFixture.build(.exifInMdat)
        // The mdat claims more than arrives.
        var short = good
        short.removeLast(10)
        #expect(isMalformed(refusal(short, as: .heic)))
        // A meta over the cap is refused from its header alone.
        #expect(isUnsupported(refusal(ftyp + Bytes.be32(5 << 20) + Bytes.ascii("meta"), as: .heic)))
        #expect(isUnsupported(refusal(ftyp + Bytes.be32(0) + Bytes.ascii("meta") + Bytes.random(100, seed: 5),
                                      as: .heic)))
        let hugeLargeSize = [UInt8](repeating: 0xFF, count: 8)
        #expect(isMalformed(refusal(ftyp + Bytes.be32(1) + Bytes.ascii("mdat") + hugeLargeSize, as: .heic)))
        #expect(isMalformed(refusal(ftyp + Bytes.be32(4) + Bytes.ascii("free"), as: .heic)))
        #expect(isUnsupported(refusal(ftyp + HEIFFixture.box("moov", []) + mdat, as: .heic)))
        #expect(isMalformed(refusal(mdat + ftyp, as: .heic)))
        #expect(isMalformed(refusal(ftyp + mdat, as: .heic)))  // no meta
        // iloc extents: of unspecified length, built from another item, overflowing, outside idat, odd field sizes.
        func exif(method: Int = 0, length: Int) -> [UInt8] {
            HEIFFixture.file(iloc: HEIFFixture.iloc([HEIFFixture.item(2, method: method, offset: 0, length: length)]))
        }
        #expect(isUnsupported(refusal(exif(length: 0), as: .heic)))
        #expect(isUnsupported(refusal(exif(method: 2, length: 4), as: .heic)))
        #expect(isMalformed(refusal(exif(method: 1, length: 4), as: .heic)))  // no idat
        let overflowing = HEIFFixture.fullBox("iloc", version: 1, [0x88, 0x80] + Bytes.be16(1) + Bytes.be16(2)
            + Bytes.be16(0) + Bytes.be16(0) + [UInt8](repeating: 0xFF, count: 8) + Bytes.be16(1)
            + [UInt8](repeating: 0xFF, count: 8) + Bytes.be32(0) + Bytes.be32(16))
        #expect(isMalformed(refusal(HEIFFixture.file(iloc: overflowing), as: .heic)))
        let oddSizes = HEIFFixture.fullBox("iloc", version: 1, [0x33, 0x00] + Bytes.be16(0))
        #expect(isMalformed(refusal(HEIFFixture.file(iloc: oddSizes), as: .heic)))
        // Many items whose extents have no bytes at all: read in one pass, not one per declared extent.
        let empty = HEIFFixture.fullBox("iloc", version: 1, [0x00, 0x00] + Bytes.be16(1000)
            + (1 ... 1000).flatMap { _ in Bytes.be16(9) + Bytes.be16(0) + Bytes.be16(0) + Bytes.be16(0xFFFF) })
        #expect(refusal(HEIFFixture.file(iloc: empty), as: .heic) == nil)
    }

    @Test func heifOverlappingExtentsCostOneZeroingEach() {
        // 50,000 extents, each over the whole 1 MiB of idat (or mdat): zeroed once, not 50,000 times.
        let data = [UInt8](repeating: 0xA5, count: 1 << 20)
        let count = 50000
        for inIdat in [true, false] {
            let dataAt = inIdat ? 0 : HEIFFixture.ftyp.count + 12 + HEIFFixture.hdlr.count + HEIFFixture.pitm.count
                + HEIFFixture.iinf.count + 12 + 4 + 16 * count + HEIFFixture.iprp.count + 8
            let iloc = HEIFFixture.iloc(Array(repeating: HEIFFixture.item(2, method: inIdat ? 1 : 0, offset: dataAt,
                                                                          length: data.count), count: count))
            let meta = HEIFFixture.fullBox("meta", version: 0, HEIFFixture.hdlr + HEIFFixture.pitm + HEIFFixture.iinf
                + iloc + HEIFFixture.iprp + (inIdat ? HEIFFixture.box("idat", data) : []))
            let file = HEIFFixture.ftyp + meta + (inIdat ? [] : HEIFFixture.box("mdat", data))
            #expect(inIdat || HEIFFixture.ftyp.count + meta.count + 8 == dataAt)
            let started = ContinuousClock.now
            let outcome = Feeding.whole(file, as: .heic)
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(outcome.error == nil)
            #expect(outcome.output.count == file.count)
            #expect(outcome.output.suffix(data.count).allSatisfy { $0 == 0 })
        }
    }

    @Test func heifExtentReachingIntoTheMetaBoxIsZeroedThere() {
        // An Exif item whose file-offset extent points into the meta box itself: at hdlr's handler type, past
        // meta's header (12 bytes), hdlr's (8), its version and flags (4) and its pre_defined field (4).
        let target = HEIFFixture.ftyp.count + 12 + 8 + 4 + 4
        let file = HEIFFixture.file(iloc: HEIFFixture.iloc([HEIFFixture.item(2, offset: target, length: 4)]))
        #expect(Array(file[target ..< target + 4]) == Bytes.ascii("pict"))
        let outcome = Feeding.whole(file, as: .heic)
        #expect(outcome.error == nil)
        #expect(outcome.output.count == file.count)
        #expect(outcome.output[target ..< target + 4].allSatisfy { $0 == 0 })
    }

    @Test func feedingAfterFinishIsRefused() throws {
        var sanitizer = MediaSanitizer(type: .text)
        _ = try sanitizer.feed(Bytes.ascii("done"))
        _ = try sanitizer.finish()
        #expect(throws: MediaError.self) { try sanitizer.feed(Bytes.ascii("more")) }
    }
}
