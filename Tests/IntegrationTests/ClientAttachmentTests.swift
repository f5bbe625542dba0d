import Crypto
import Foundation
import SwitchboardClient
// Swift Testing has an `Attachment` too: this one is the SDK's.
import struct SwitchboardClient.Attachment
import Testing
import TestSupport

/// The client SDK's attachments against the real server: uploads with progress, messages that carry them, and
/// downloads into files that resume where they stopped.
@Suite("The client SDK's attachments against the real server", .timeLimit(.minutes(5)))
struct ClientAttachmentTests {
    /// A fresh service, its people, an interaction Alice opened, and a scratch directory.
    struct Setup {
        let app: TestApp
        let who: InteractionsEndToEndTests.People
        let id: String
        let directory: URL

        /// Stops the service and removes the scratch directory.
        func end() async {
            try? FileManager.default.removeItem(at: directory)
            await app.stop()
        }
    }

    static func setUp() async throws -> Setup {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("client-attachments-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return Setup(app: app, who: who, id: id, directory: directory)
    }

    static func client(port: Int, token: String) -> SwitchboardClient {
        SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, tokenProvider: { token },
                          retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(50)))
    }

    /// The strong ETag the server gives a file's download.
    static func etag(_ bytes: [UInt8]) -> String { "\"" + Hex.text(SHA256.hash(bytes)) + "\"" }

    /// Uploads `bytes` as a text file through the SDK; its metadata.
    static func uploaded(_ client: SwitchboardClient, _ bytes: [UInt8], to id: String) async throws -> Attachment {
        let upload = client.upload(Data(bytes), type: "text/plain", filename: "notes.txt", to: id)
        return try await upload.value()
    }

    /// Requests the server counted for the download route with `status`.
    static func downloads(_ app: TestApp, status: Int) async throws -> Double {
        let metrics = try await app.metrics().text
        return MetricsTests.sample(metrics, #"switchboard_http_requests_total{route="/v1/attachments/{id}",method="GET",status="\#(status)"}"#) ?? 0
    }

    @Test func aFileUploadedWithProgressSentSeenLiveAndDownloaded() async throws {
        let setup = try await Self.setUp()
        let (app, who, id) = (setup.app, setup.who, setup.id)
        let alice = Self.client(port: app.port, token: who.alice), agent = Self.client(port: app.port, token: who.agent)
        let live = ReceivedEvents()
        let listening = Task { await live.collect(agent.events(for: id)) }

        let bytes = AttachmentsTests.text(1_500_000)
        let source = setup.directory.appendingPathComponent("Kontoauszug März.txt")
        try Data(bytes).write(to: source)
        let upload = alice.upload(contentsOf: source, type: "text/plain", to: id)
        var progress: [Int64] = []
        for await sent in upload.progress { progress.append(sent) }
        let attachment = try await upload.value()
        #expect(!progress.isEmpty && progress.last == 1_500_000, "\(progress.suffix(3))")
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 <= $1 }, "never backwards: \(progress)")
        #expect(attachment.size == 1_500_000 && attachment.contentType == "text/plain")
        #expect(attachment.filename == "Kontoauszug März.txt", "the file's own name by default")
        #expect(attachment.sha256 == Hex.text(SHA256.hash(bytes)) && attachment.scanState == "not_scanned")
        #expect(attachment.width == nil && attachment.height == nil)

        let message = try await alice.sendMessage(attachments: [attachment.id], to: id)
        #expect(message.text == "" && message.attachments == [attachment])

        // The other side: in the history, and live.
        var history: [Message] = []
        for try await item in agent.allMessages(in: id) { history.append(item) }
        #expect(history == [message])
        #expect(await eventually {
            live.all.contains { if case .message(let seen) = $0 { seen == message } else { false } }
        })

        let target = setup.directory.appendingPathComponent("downloaded.txt")
        let downloaded = try await agent.download(attachment.id, to: target)
        #expect(downloaded == DownloadedFile(url: target, size: 1_500_000, resumedFrom: 0))
        #expect(try Data(contentsOf: target) == Data(bytes))
        #expect(try String(contentsOf: downloaded.etagFile, encoding: .utf8) == Self.etag(bytes))
        // Again into the complete file: one 416 answer, nothing transferred, nothing changed.
        let again = try await agent.download(attachment.id, to: target)
        #expect(again == DownloadedFile(url: target, size: 1_500_000, resumedFrom: 1_500_000))
        #expect(try Data(contentsOf: target) == Data(bytes))
        #expect(try await Self.downloads(app, status: 416) == 1)

        // With text too, and a second file.
        let second = try await Self.uploaded(alice, AttachmentsTests.text(10), to: id)
        let both = try await alice.sendMessage("Statement and notes", attachments: [second.id], to: id)
        #expect(both.text == "Statement and notes" && both.attachments.map(\.id) == [second.id])
        listening.cancel()
        await setup.end()
    }

    @Test func aPartialDownloadIsResumedWithARangeRequest() async throws {
        let setup = try await Self.setUp()
        let (app, who, id) = (setup.app, setup.who, setup.id)
        let alice = Self.client(port: app.port, token: who.alice)
        let bytes = AttachmentsTests.text(1_500_000)
        let attachment = try await Self.uploaded(alice, bytes, to: id)
        let target = setup.directory.appendingPathComponent("resumed.txt")
        let sidecar = target.appendingPathExtension("etag")

        // The first half, with the validator of the answer it came from, as an interrupted download leaves them.
        try Data(bytes[..<750_000]).write(to: target)
        try Data(Self.etag(bytes).utf8).write(to: sidecar)
        let resumed = try await alice.download(attachment.id, to: target)
        #expect(resumed == DownloadedFile(url: target, size: 1_500_000, resumedFrom: 750_000))
        #expect(try Data(contentsOf: target) == Data(bytes))
        #expect(try await Self.downloads(app, status: 206) == 1, "the rest was asked for with a range")
        #expect(try await Self.downloads(app, status: 200) == 0)

        // A half of something else, whose validator does not match: the server sends the whole file instead.
        try Data(repeating: UInt8(ascii: "x"), count: 750_000).write(to: target)
        try Data("\"stale\"".utf8).write(to: sidecar)
        #expect(try await alice.download(attachment.id, to: target).resumedFrom == 0)
        #expect(try Data(contentsOf: target) == Data(bytes))
        #expect(try String(contentsOf: sidecar, encoding: .utf8) == Self.etag(bytes))

        // A file without its validator is downloaded again from the start.
        try Data(repeating: UInt8(ascii: "y"), count: 100).write(to: target)
        try FileManager.default.removeItem(at: sidecar)
        #expect(try await alice.download(attachment.id, to: target).resumedFrom == 0)
        #expect(try Data(contentsOf: target) == Data(bytes))

        // Longer than the attachment, though tagged as it: the 416 does not fit, so it starts over.
        try Data(bytes + Array("trailing".utf8)).write(to: target)
        #expect(try await alice.download(attachment.id, to: target).resumedFrom == 0)
        #expect(try Data(contentsOf: target) == Data(bytes))
        #expect(try await Self.downloads(app, status: 200) == 3)
        await setup.end()
    }

    /// The network cuts the download mid-body: the same call resumes from what reached the file.
    @Test func aDownloadCutByTheNetworkResumesInTheSameCall() async throws {
        let setup = try await Self.setUp()
        let (app, who, id) = (setup.app, setup.who, setup.id)
        let bytes = AttachmentsTests.text(1_500_000)
        let attachment = try await Self.uploaded(Self.client(port: app.port, token: who.alice), bytes, to: id)
        let proxy = try CuttingProxy(upstream: app.port, budgets: [600_000])
        let client = Self.client(port: proxy.port, token: who.alice)
        let target = setup.directory.appendingPathComponent("cut.txt")
        let downloaded = try await client.download(attachment.id, to: target)
        #expect(proxy.connections == 2)
        #expect(downloaded.size == 1_500_000 && downloaded.resumedFrom > 500_000 && downloaded.resumedFrom < 600_000,
                "\(downloaded.resumedFrom)")
        #expect(try Data(contentsOf: target) == Data(bytes))
        #expect(proxy.bytesFromServer < 1_500_000 + 100_000, "the first part was not sent twice")
        proxy.close()
        await setup.end()
    }

    @Test func aRetriedUploadIsStoredOnce() async throws {
        let setup = try await Self.setUp()
        let (app, who, id) = (setup.app, setup.who, setup.id)
        let proxy = try DroppingProxy(upstream: app.port) { head in head.hasPrefix("POST ") && head.contains("/attachments") }
        let client = Self.client(port: proxy.port, token: who.alice)
        let bytes = AttachmentsTests.text(200_000)
        let upload = client.upload(Data(bytes), type: "text/plain", to: id)
        let attachment = try await upload.value()
        #expect(proxy.hasDropped, "the first answer was lost on the way")
        #expect(attachment.size == 200_000 && attachment.filename == nil)
        #expect(try await app.database.query("SELECT 1 FROM attachments").count == 1)
        // The same key later (after a relaunch, say): the same attachment again, not a second one.
        let again = client.upload(Data(bytes), type: "text/plain", to: id, idempotencyKey: upload.idempotencyKey)
        #expect(try await again.value() == attachment)
        #expect(try await app.database.query("SELECT 1 FROM attachments").count == 1)
        proxy.close()
        await setup.end()
    }

    @Test func anUploadCanBeCancelled() async throws {
        let setup = try await Self.setUp()
        let alice = Self.client(port: setup.app.port, token: setup.who.alice)
        let source = setup.directory.appendingPathComponent("big.txt")
        try Data(AttachmentsTests.text(5_000_000)).write(to: source)
        let upload = alice.upload(contentsOf: source, type: "text/plain", to: setup.id)
        upload.cancel()
        await #expect(throws: CancellationError.self) { try await upload.value() }
        for await _ in upload.progress {}
        await setup.end()
    }

    @Test func refusalsAreTheSDKsProblems() async throws {
        let setup = try await Self.setUp()
        let (app, who, id) = (setup.app, setup.who, setup.id)
        let alice = Self.client(port: app.port, token: who.alice)

        // A PNG declared as a PDF.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 100)
        let renamed = alice.upload(Data(png), type: "application/pdf", filename: "statement.pdf", to: id)
        for await _ in renamed.progress {}
        do {
            _ = try await renamed.value()
            Issue.record("expected a 415")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 415 && problem.title == "Unsupported Media Type")
        }

        // Not visible to Bob: a 404, and no file is written.
        let attachment = try await Self.uploaded(alice, AttachmentsTests.text(100), to: id)
        let target = setup.directory.appendingPathComponent("bob.txt")
        do {
            _ = try await Self.client(port: app.port, token: who.bob).download(attachment.id, to: target)
            Issue.record("expected a 404")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 404)
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))

        // A file that is not there fails as such, at once, not as the network.
        let missing = alice.upload(contentsOf: setup.directory.appendingPathComponent("missing.txt"), type: "text/plain", to: id)
        await #expect(throws: CocoaError.self) { try await missing.value() }

        // Larger than the server takes: refused on the head alone, while the file is still being sent.
        let large = setup.directory.appendingPathComponent("large.txt")
        try Data(AttachmentsTests.text((10 << 20) + 1)).write(to: large)
        do {
            _ = try await alice.upload(contentsOf: large, type: "text/plain", to: id).value()
            Issue.record("expected a 413")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 413)
        }

        // The interaction ended: a 409.
        _ = try await alice.endInteraction(id)
        do {
            _ = try await Self.uploaded(alice, AttachmentsTests.text(10), to: id)
            Issue.record("expected a 409")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 409)
        }
        await setup.end()
    }
}
