import MediaFixtures
import MediaSafety
import Testing

/// Each format's fixture comes out exactly as expected, and its output, walked independently, holds no location.
@Suite(.timeLimit(.minutes(1))) struct FormatTests {
    @Test(arguments: Fixture.all) func outputIsExactlyTheCleanFile(_ fixture: Fixture) {
        let outcome = Feeding.whole(fixture.bytes, as: fixture.type)
        #expect(outcome.error == nil)
        #expect(outcome.output == fixture.expected)
        #expect(outcome.size == fixture.size)
        #expect(outcome.removed == fixture.removed)
        if fixture.type.isImage {
            #expect(!outcome.output.contains(bytes: ExifFixture.latitude(littleEndian: false)))
            #expect(!outcome.output.contains(bytes: ExifFixture.latitude(littleEndian: true)))
            #expect(!outcome.output.contains(ascii: "GPSLatitude"))
            #expect(!outcome.output.contains(ascii: "http://ns.adobe.com/xap"))
            #expect(!outcome.output.contains(ascii: "taken at home"))
        }
    }

    @Test func jpegKeepsOnlyTheOrientation() throws {
        let fixture = JPEGFixture.make()
        let output = Feeding.whole(fixture.bytes, as: .jpeg).output
        let segments = try #require(Walk.jpegSegments(output))
        #expect(segments.map(\.marker) == [0xE0, 0xE1, 0xE2, 0xDB, 0xC0, 0xC4, 0xDA])
        let exif = try #require(segments.first { $0.marker == 0xE1 }?.payload)
        #expect(Array(exif.prefix(6)) == Array("Exif\0\0".utf8))
        let tiff = Array(exif.dropFirst(6))
        #expect(Array(tiff.prefix(4)) == [0x4D, 0x4D, 0x00, 0x2A])
        let ifd = Bytes.readBE(tiff, 4, 4)
        #expect(Bytes.readBE(tiff, ifd, 2) == 1)  // one entry
        #expect(Bytes.readBE(tiff, ifd + 2, 2) == 0x0112)
        #expect(Bytes.readBE(tiff, ifd + 4, 2) == 3)  // SHORT
        #expect(Bytes.readBE(tiff, ifd + 10, 2) == 6)
        #expect(Bytes.readBE(tiff, ifd + 14, 4) == 0)  // no next IFD
        #expect(!tiff.contains(bytes: [0x88, 0x25]))  // no GPS IFD pointer
        // Only that one APPn in the whole file, the APP1 between the scans gone too; both scans intact.
        #expect(Walk.jpegMetadataMarkers(output) == [0xE0, 0xE1, 0xE2])
        let scans = JPEGFixture.firstScan + JPEGFixture.dht + JPEGFixture.sos + JPEGFixture.secondScan + [0xFF, 0xD9]
        #expect(output.suffix(scans.count).elementsEqual(scans))
    }

    @Test func jpegWithoutRotationGetsNoExifAtAll() {
        for orientation in [0, 1, 9] {
            let output = Feeding.whole(JPEGFixture.make(orientation: orientation).bytes, as: .jpeg).output
            #expect(Walk.jpegMetadataMarkers(output) == [0xE0, 0xE2])
        }
    }

    @Test func jpegDropsWhatFollowsEndOfImage() {
        let fixture = JPEGFixture.make(trailer: true)
        let outcome = Feeding.whole(fixture.bytes, as: .jpeg)
        #expect(outcome.output.suffix(2) == [0xFF, 0xD9])
        #expect(!outcome.output.contains(ascii: "MPF"))
        #expect(outcome.removed.contains("trailing data"))
    }

    @Test func pngKeepsImageChunksWithTheirCRCs() throws {
        let fixture = PNGFixture.make()
        let chunks = try #require(Walk.pngChunks(Feeding.whole(fixture.bytes, as: .png).output))
        #expect(chunks.map(\.type) == ["IHDR", "pHYs", "IDAT", "IDAT", "IEND"])
        #expect(chunks.allSatisfy { $0.crcOK })
        let idat = chunks.filter { $0.type == "IDAT" }.flatMap(\.data)
        #expect(idat == Bytes.random(600, seed: 21) + Bytes.random(400, seed: 22))
    }

    @Test func gifKeepsLoopingAndImageData() throws {
        let fixture = GIFFixture.make()
        let blocks = try #require(Walk.gifBlocks(Feeding.whole(fixture.bytes, as: .gif).output))
        #expect(blocks.map(\.kind) == ["app NETSCAPE2.0", "ext f9", "image"])
        #expect(blocks.last?.data == Bytes.random(600, seed: 32))
        // The input, walked the same way, shows what went: the comment, IPTC and XMP (its magic trailer parses).
        let input = try #require(Walk.gifBlocks(fixture.bytes))
        #expect(input.map(\.kind)
            == ["app NETSCAPE2.0", "ext fe", "app MGK8BIM0000", "ext f9", "image", "app XMP DataXMP"])
    }

    @Test func webpKeepsItsLengthAndBlanksMetadataChunks() throws {
        let fixture = WebPFixture.make()
        let output = Feeding.whole(fixture.bytes, as: .webp).output
        #expect(output.count == fixture.bytes.count)
        let chunks = try #require(Walk.webpChunks(output))  // the RIFF size still matches
        #expect(chunks.map(\.fourCC) == ["VP8X", "ICCP", "VP8 ", "JUNK", "JUNK"])
        #expect(chunks[0].payload[0] & 0x0C == 0)  // no EXIF, no XMP flag
        #expect(chunks[0].payload[0] & 0x20 != 0)  // the ICC flag stays
        #expect(chunks[2].payload == WebPFixture.lossyPayload)
        #expect(chunks[3].payload.allSatisfy { $0 == 0 } && chunks[4].payload.allSatisfy { $0 == 0 })
        #expect(chunks[3].payload.count == WebPFixture.exifPayload.count)
    }

    @Test func heicZeroesItsMetadataItemsInPlace() {
        for layout in [HEIFFixture.Layout.exifInMdat, .exifInIdat] {
            let (bytes, blanks, hevc) = HEIFFixture.build(layout)
            let output = Feeding.whole(bytes, as: .heic).output
            #expect(output.count == bytes.count)
            for range in blanks { #expect(output[range].allSatisfy { $0 == 0 }) }
            #expect(output[hevc] == bytes[hevc])
            let changed = output.indices.filter { output[$0] != bytes[$0] }
            #expect(changed.allSatisfy { index in blanks.contains { $0.contains(index) } })  // nothing else changed
        }
    }

    @Test func heicWithMetaAfterMediaDataIsRefused() {
        let (bytes, _, _) = HEIFFixture.build(.metaAfterMdat)
        let outcome = Feeding.whole(bytes, as: .heic)
        guard case .unsupported(let sentence) = outcome.error else {
            Issue.record("expected unsupported, got \(outcome)")
            return
        }
        #expect(sentence.contains("metadata after media data"))
        // Nothing of the Exif item was returned before the refusal.
        #expect(!outcome.output.contains(bytes: ExifFixture.latitude(littleEndian: false)))
    }
}
