import Foundation
@testable import SwitchboardClient
import Testing

/// The decisions of a resumable download: what to ask for, and what to do with each answer.
@Suite(.timeLimit(.minutes(1)))
struct ResumePlanTests {
    static let tag = "\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\""

    @Test func aPartialFileWithItsValidatorAsksForTheRest() {
        let plan = ResumePlan(existingSize: 750_000, etag: Self.tag + "\n")
        #expect(plan.isResuming && plan.etag == Self.tag)
        #expect(plan.headers == ["Range": "bytes=750000-", "If-Range": Self.tag])
    }

    @Test(arguments: [(0, tag), (750_000, nil), (750_000, "W/\(tag)"), (750_000, "abc"), (750_000, "\"a\"b\""),
                      (-1, tag)] as [(Int64, String?)])
    func otherwiseTheWholeFile(size: Int64, etag: String?) {
        let plan = ResumePlan(existingSize: size, etag: etag)
        #expect(!plan.isResuming && plan.headers.isEmpty)
    }

    @Test func aWholeAnswerReplacesTheFileAndBringsItsValidator() {
        let resuming = ResumePlan(existingSize: 100, etag: Self.tag)
        let fresh = ResumePlan(existingSize: 0, etag: nil)
        for plan in [resuming, fresh] {
            #expect(plan.action(status: 200, contentRange: nil, etag: "\"new\"", contentLength: 5000)
                    == .replace(size: 5000, etag: "\"new\""))
            #expect(plan.action(status: 200, contentRange: nil, etag: nil, contentLength: -1) == .replace(size: nil, etag: nil))
            #expect(plan.action(status: 200, contentRange: nil, etag: "W/\"weak\"", contentLength: nil)
                    == .replace(size: nil, etag: nil), "a weak tag cannot validate a range later")
        }
    }

    @Test func aPartThatContinuesTheFileIsAppended() {
        let plan = ResumePlan(existingSize: 100, etag: Self.tag)
        #expect(plan.action(status: 206, contentRange: "bytes 100-4999/5000", etag: Self.tag, contentLength: 4900)
                == .append(size: 5000))
        #expect(plan.action(status: 206, contentRange: "bytes 100-4999/5000", etag: nil, contentLength: nil)
                == .append(size: 5000))
    }

    @Test(arguments: ["bytes 0-4999/5000", "bytes 100-999/5000", "bytes 100-4999/*", "bytes */5000", "nonsense"] as [String])
    func aPartThatDoesNotContinueTheFileStartsOver(contentRange: String) {
        let plan = ResumePlan(existingSize: 100, etag: Self.tag)
        #expect(plan.action(status: 206, contentRange: contentRange, etag: Self.tag, contentLength: nil) == .startOver)
    }

    @Test func aPartOfAnotherFileOrOneNotAskedForStartsOver() {
        let plan = ResumePlan(existingSize: 100, etag: Self.tag)
        #expect(plan.action(status: 206, contentRange: "bytes 100-4999/5000", etag: "\"other\"", contentLength: nil)
                == .startOver)
        #expect(plan.action(status: 206, contentRange: nil, etag: Self.tag, contentLength: nil) == .startOver)
        let fresh = ResumePlan(existingSize: 0, etag: nil)
        #expect(fresh.action(status: 206, contentRange: "bytes 0-4999/5000", etag: Self.tag, contentLength: nil) == .startOver)
    }

    @Test func unsatisfiableMeansCompleteWhenTheFileHasEveryByte() {
        let complete = ResumePlan(existingSize: 5000, etag: Self.tag)
        #expect(complete.action(status: 416, contentRange: "bytes */5000", etag: nil, contentLength: nil) == .complete(size: 5000))
        let longer = ResumePlan(existingSize: 6000, etag: Self.tag)
        #expect(longer.action(status: 416, contentRange: "bytes */5000", etag: nil, contentLength: nil) == .startOver)
        #expect(complete.action(status: 416, contentRange: nil, etag: nil, contentLength: nil) == .startOver)
        let fresh = ResumePlan(existingSize: 0, etag: nil)
        #expect(fresh.action(status: 416, contentRange: "bytes */0", etag: nil, contentLength: nil) == .refuse,
                "no range was asked for: a problem like any other")
    }

    @Test func errorsAndTheUnexpected() {
        let plan = ResumePlan(existingSize: 100, etag: Self.tag)
        for status in [400, 401, 403, 404, 429, 500, 503] {
            #expect(plan.action(status: status, contentRange: nil, etag: nil, contentLength: nil) == .refuse)
        }
        for status in [201, 204, 304] {
            #expect(plan.action(status: status, contentRange: nil, etag: nil, contentLength: nil) == .unexpected)
        }
    }

    @Test func contentRanges() {
        #expect(ContentRange("bytes 0-0/1") == .part(first: 0, last: 0, total: 1))
        #expect(ContentRange(" bytes 100-299/5000 ") == .part(first: 100, last: 299, total: 5000))
        #expect(ContentRange("bytes 100-299/*") == .part(first: 100, last: 299, total: nil))
        #expect(ContentRange("Bytes */5000") == .unsatisfied(total: 5000))
        #expect(ContentRange("bytes 0-6442450943/6442450944") == .part(first: 0, last: 6_442_450_943, total: 6_442_450_944))
        for bad in ["", "bytes", "bytes */*", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-4/10", "bytes 0-4", "items 0-4/10",
                    "bytes 0-4/10/2", "bytes a-4/10", "bytes 0-4/x", "bytes 0 - 4/10"] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func theValidatorLivesNextToTheFile() {
        let file = URL(fileURLWithPath: "/tmp/downloads/Statement März.pdf")
        #expect(ResumePlan.sidecar(for: file).path == "/tmp/downloads/Statement März.pdf.etag")
        #expect(DownloadedFile(url: file, size: 1, resumedFrom: 0).etagFile == ResumePlan.sidecar(for: file))
    }
}

/// The file work of a download attempt, on a scratch directory.
@Suite(.timeLimit(.minutes(1)))
struct FileDownloadFilesTests {
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func startingAFileEmptiesItThenRemembersTheNewValidator() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.txt"), sidecar = ResumePlan.sidecar(for: file)
        try Data("old contents".utf8).write(to: file)
        try Data("\"old\"".utf8).write(to: sidecar)

        let handle = try FileDownload.startFile(file, sidecar: sidecar, etag: "\"new\"")
        try handle.write(contentsOf: Data("new".utf8))
        try handle.close()
        #expect(try Data(contentsOf: file) == Data("new".utf8))
        #expect(try String(contentsOf: sidecar, encoding: .utf8) == "\"new\"")
        #expect(SwitchboardClient.size(of: file) == 3)

        // An answer without a validator: the old one is forgotten, so the file is never resumed against it.
        try FileDownload.startFile(file, sidecar: sidecar, etag: nil).close()
        #expect(!FileManager.default.fileExists(atPath: sidecar.path))
        #expect(SwitchboardClient.size(of: file) == 0)

        let created = directory.appendingPathComponent("b.txt")
        try FileDownload.startFile(created, sidecar: ResumePlan.sidecar(for: created), etag: "\"b\"").close()
        #expect(FileManager.default.fileExists(atPath: created.path))
        #expect(SwitchboardClient.size(of: directory.appendingPathComponent("none.txt")) == 0)

        try FileDownload.remove(file, sidecar)
        try FileDownload.remove(file, sidecar)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func anUnwritableFileIsNotRetried() throws {
        let file = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/a.txt")
        #expect(throws: Unretried.self) {
            try Unretried.wrapping { try FileDownload.startFile(file, sidecar: ResumePlan.sidecar(for: file), etag: nil) }
        }
    }
}

/// The upload's URL: the file name survives the server's query decoding.
@Suite(.timeLimit(.minutes(1)))
struct UploadURLTests {
    @Test func theFileNameIsEncodedWhole() throws {
        let client = SwitchboardClient(baseURL: URL(string: "https://api.example.com/base")!, tokenProvider: { "t" })
        #expect(try client.attachmentsURL("i-1", filename: nil).absoluteString
                == "https://api.example.com/base/v1/interactions/i-1/attachments")
        #expect(try client.attachmentsURL("i-1", filename: "a+b & c/d=é?.txt").absoluteString
                == "https://api.example.com/base/v1/interactions/i-1/attachments?filename=a%2Bb%20%26%20c%2Fd%3D%C3%A9%3F.txt")
    }
}
