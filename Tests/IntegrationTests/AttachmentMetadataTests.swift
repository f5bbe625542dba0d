import Foundation
import MediaFixtures
import MediaSafety
import Testing
import TestSupport

/// Photos as phones write them (Exif with GPS, XMP, IPTC, comments) come back from the server without their location:
/// the stored bytes, read back from the database, are parsed and searched.
@Suite("Attachment metadata", .timeLimit(.minutes(5)))
struct AttachmentMetadataTests {
    @Test func photosLoseTheirLocationBeforeTheyAreStored() async throws {
        let (app, who, id) = try await AttachmentsTests.begin()
        for fixture in [JPEGFixture.make(), PNGFixture.make(), HEIFFixture.make(.exifInMdat), HEIFFixture.make(.exifInIdat),
                        WebPFixture.make(), GIFFixture.make()] {
            let meta = try await AttachmentsTests.uploaded(app, id, token: who.alice, type: fixture.type.rawValue,
                                                           bytes: fixture.bytes)
            let attachmentID = try #require(meta["id"] as? String)
            #expect(meta["width"] as? Int == fixture.size?.width, "\(fixture.name)")
            #expect(meta["height"] as? Int == fixture.size?.height, "\(fixture.name)")
            // What the database holds, not what the route answers.
            let stored = try await app.database.query(
                "SELECT string_agg(data, ''::bytea ORDER BY byte_offset) AS bytes FROM attachment_pieces WHERE attachment_id = $1::uuid",
                [attachmentID]).first?.decode("bytes", as: [UInt8].self) ?? []
            #expect(stored == fixture.expected, "\(fixture.name)")
            #expect(!stored.contains(bytes: ExifFixture.latitude(littleEndian: false)), "\(fixture.name)")
            #expect(!stored.contains(bytes: ExifFixture.latitude(littleEndian: true)), "\(fixture.name)")
            #expect(!stored.contains(ascii: "http://ns.adobe.com/xap"), "\(fixture.name)")
            #expect(!stored.contains(ascii: "taken at home"), "\(fixture.name)")
            switch fixture.type {
            case .jpeg:
                // Only JFIF, the orientation-only Exif and the ICC profile remain; the image data is intact.
                #expect(Walk.jpegMetadataMarkers(stored) == [0xE0, 0xE1, 0xE2])
                let exif = try #require(Walk.jpegSegments(stored)?.first { $0.marker == 0xE1 }?.payload)
                #expect(!exif.contains(bytes: [0x88, 0x25]))  // no GPS IFD pointer
            case .png:
                let chunks = try #require(Walk.pngChunks(stored))
                let types = chunks.map(\.type)
                #expect(types == ["IHDR", "pHYs", "IDAT", "IDAT", "IEND"])
                let checksummed = chunks.allSatisfy { $0.crcOK }
                #expect(checksummed)
            case .heic:
                // The Exif item's bytes are zeros where they lie; the HEVC data is untouched.
                let layout = HEIFFixture.build(fixture.name.contains("idat") ? .exifInIdat : .exifInMdat)
                for blank in layout.blanks {
                    let zeroed = stored[blank].allSatisfy { $0 == 0 }
                    #expect(zeroed)
                }
                #expect(Array(stored[layout.hevc]) == Array(fixture.bytes[layout.hevc]))
            default:
                break
            }
            // The download is the stored file.
            let downloaded = try await app.call("GET", "/v1/attachments/\(attachmentID)?inline=1", token: who.alice)
            #expect(downloaded.body == stored)
            #expect(downloaded.header("Content-Type") == fixture.type.rawValue)
            #expect(downloaded.header("Content-Disposition") == "inline")
        }
        await app.stop()
    }
}
