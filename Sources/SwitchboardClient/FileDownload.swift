import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of a download into a file: the answer's body written to disk chunk by chunk as it arrives (never held
/// whole), as a ``ResumePlan`` decides — from the start, or appended to what the file holds.
///
/// A streaming request (``StreamingRequest``) rather than a download task: a download task writes to a temporary
/// file of its own, which an interrupted attempt would lose, while here every byte received stays in the file for
/// the next attempt to resume from.
enum FileDownload {
    /// How the attempt ended (a network failure is thrown).
    enum Result: Sendable, Equatable {
        /// The file is complete with `size` bytes; the request started at `offset`.
        case finished(size: Int64, offset: Int64)
        /// The answer did not fit the file; the file and its validator were removed, ask again for the whole file.
        case startOver
    }

    /// The most of an error answer's body kept for its problem details.
    static let problemBodyLimit = 16 * 1024

    /// Sends `request` (built from `plan`) on a session configured by `configuration`, writing into `file` and
    /// keeping the answer's validator in `sidecar`. File-system failures are thrown wrapped in ``Unretried``.
    static func run(_ request: URLRequest, plan: ResumePlan, file: URL, sidecar: URL,
                    configuration: URLSessionConfiguration) async throws -> SwitchboardClient.Exchange<Result> {
        var writer: FileHandle?
        defer { try? writer?.close() }
        var head: HTTPURLResponse?
        var action = ResumePlan.Action.unexpected
        var errorBody = Data()
        for try await part in StreamingRequest.start(request, configuration: configuration) {
            switch part {
            case .head(let response):
                head = response
                action = plan.action(status: response.statusCode,
                                     contentRange: response.value(forHTTPHeaderField: "Content-Range"),
                                     etag: response.value(forHTTPHeaderField: "ETag"),
                                     contentLength: response.expectedContentLength)
                switch action {
                case .replace(_, let etag):
                    writer = try Unretried.wrapping { try startFile(file, sidecar: sidecar, etag: etag) }
                case .append:
                    writer = try Unretried.wrapping {
                        let handle = try FileHandle(forWritingTo: file)
                        try handle.truncate(atOffset: UInt64(plan.existingSize))
                        return handle
                    }
                case .complete(let size):
                    // Leaving the loop cancels the request, whose body is only the problem details.
                    return .value(.finished(size: size, offset: size))
                case .startOver:
                    try Unretried.wrapping { try remove(file, sidecar) }
                    return .value(.startOver)
                case .unexpected:
                    throw SwitchboardError.invalidResponse("unexpected status \(response.statusCode) to a download")
                case .refuse:
                    break
                }
            case .bytes(let bytes):
                if let writer {
                    try Unretried.wrapping { try writer.write(contentsOf: bytes) }
                } else if errorBody.count < problemBodyLimit {
                    errorBody.append(bytes.prefix(problemBodyLimit - errorBody.count))
                }
            }
        }
        // The stream also ends early, without an error, when the task is cancelled.
        try Task.checkCancellation()
        guard let head else { throw URLError(.badServerResponse) }
        let offset: Int64
        let expected: Int64?
        switch action {
        case .replace(let size, _): (offset, expected) = (0, size)
        case .append(let size): (offset, expected) = (plan.existingSize, size)
        default: return .refused(errorBody, head)
        }
        let written = try Unretried.wrapping { try writer?.offset() ?? 0 }
        // A body cut short without an error: a network failure, which the next attempt resumes.
        if let expected, Int64(written) != expected { throw URLError(.networkConnectionLost) }
        return .value(.finished(size: Int64(written), offset: offset))
    }

    /// Empties (or creates) `file` for a whole new body, and remembers its validator `etag` in `sidecar` (or
    /// forgets the old one), in that order: a partial file is never paired with another answer's validator.
    static func startFile(_ file: URL, sidecar: URL, etag: String?) throws -> FileHandle {
        let manager = FileManager.default
        if !manager.fileExists(atPath: file.path) {
            guard manager.createFile(atPath: file.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
            }
        }
        let handle = try FileHandle(forWritingTo: file)
        do {
            try handle.truncate(atOffset: 0)
            if let etag {
                try Data(etag.utf8).write(to: sidecar, options: .atomic)
            } else if manager.fileExists(atPath: sidecar.path) {
                try manager.removeItem(at: sidecar)
            }
            return handle
        } catch {
            try? handle.close()
            throw error
        }
    }

    /// Removes `file` and its `sidecar`, those that exist.
    static func remove(_ file: URL, _ sidecar: URL) throws {
        for url in [sidecar, file] where FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.removeItem(at: url)
        }
    }
}

/// An error that ends a call at once instead of being retried as a network failure (a file that cannot be
/// written, say); ``SwitchboardClient/retrying(_:exchange:)`` throws the error it wraps.
struct Unretried: Error {
    /// The error to throw.
    let error: any Error

    /// Runs `body`, wrapping what it throws.
    static func wrapping<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw Unretried(error: error) }
    }
}
