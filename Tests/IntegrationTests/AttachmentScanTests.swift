import Foundation
import Interactions
import MediaFixtures
import Testing
import TestSupport

/// Uploads scanned by a real ClamAV daemon (`ATTACHMENT_CLAMD_SOCKET`) as they stream: a clean file is `clean`, an
/// infected one is refused and leaves nothing behind, and without a verdict nothing is kept either.
@Suite("Attachment scanning", .timeLimit(.minutes(5)))
struct AttachmentScanTests {
    static func leftovers(_ app: TestApp) async throws -> Int {
        try await app.database.query("""
            SELECT (SELECT count(*) FROM attachments) + (SELECT count(*) FROM attachment_pieces) AS n
            """).first?.decode("n", as: Int.self) ?? -1
    }

    @Test func cleanFilesAreMarkedCleanAndInfectedOnesAreRefused() async throws {
        let daemon = try await ClamdDaemon.start()
        defer { daemon.stop() }
        let (app, who, id) = try await AttachmentsTests.begin(AttachmentPolicy(clamdSocket: daemon.socketPath))
        let png = PNGFixture.make()
        let clean = try await AttachmentsTests.uploaded(app, id, token: who.alice, type: "image/png", bytes: png.bytes)
        #expect(clean["scan_state"] as? String == "clean")
        let attachmentID = try #require(clean["id"] as? String)
        #expect(try await app.call("GET", "/v1/attachments/\(attachmentID)", token: who.alice).body == png.expected)

        // The marker across the boundary of two stored pieces (256 KiB), in a PDF (kept as sent) and in pixel data.
        var text = AttachmentsTests.text(300_000)
        text.replaceSubrange(262_130 ..< 262_130 + ClamdDaemon.marker.count, with: ClamdDaemon.marker)
        let pdf = Bytes.ascii("%PDF-1.7\n") + ClamdDaemon.marker + Bytes.ascii("\n%%EOF\n")
        let pixels = PNGFixture.signature + PNGFixture.ihdr
            + PNGFixture.chunk("IDAT", Bytes.random(500, seed: 1) + ClamdDaemon.marker) + PNGFixture.end
        let before = try await Self.leftovers(app)
        for (type, bytes) in [("text/plain", text), ("application/pdf", pdf), ("image/png", pixels)] {
            let refused = try await AttachmentsTests.upload(app, id, token: who.alice, type: type, bytes: bytes)
            #expect(refused.status == 422, "\(type): \(refused.text)")
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(try refused.json()["signature"] as? String == ClamdDaemon.signature)
        }
        #expect(await eventually { (try? await Self.leftovers(app)) == before })

        // What the sanitizer removes is never stored, so the scan (of what is kept) does not see it.
        let inMetadata = PNGFixture.signature + PNGFixture.ihdr
            + PNGFixture.chunk("tEXt", Bytes.ascii("Comment") + [0] + ClamdDaemon.marker) + PNGFixture.firstData + PNGFixture.end
        let stripped = try await AttachmentsTests.uploaded(app, id, token: who.alice, type: "image/png", bytes: inMetadata)
        #expect(stripped["scan_state"] as? String == "clean")
        await app.stop()
    }

    @Test func withoutAVerdictNothingIsKept() async throws {
        let daemon = try await ClamdDaemon.start()
        let (app, who, id) = try await AttachmentsTests.begin(AttachmentPolicy(clamdSocket: daemon.socketPath))
        daemon.stop()
        let before = try await Self.leftovers(app)
        let refused = try await AttachmentsTests.upload(app, id, token: who.alice, bytes: AttachmentsTests.text(5000))
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.header("Retry-After") == "30")
        #expect(try refused.json()["detail"] as? String == "Uploads are scanned for malware and the scanner is not answering; retry later.")
        #expect(await eventually { (try? await Self.leftovers(app)) == before })
        await app.stop()
    }
}
