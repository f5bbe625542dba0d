import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SwitchboardClient {
    /// Uploads `data` as a file of type `type` to an interaction, for a message to carry
    /// (``sendMessage(_:attachments:to:)``); starts at once and returns the upload under way.
    ///
    /// `type` is the file's media type: `image/jpeg`, `image/png`, `image/webp`, `image/heic`, `image/heif`,
    /// `image/gif`, `application/pdf` or `text/plain`; the server checks the bytes against it (a mismatch is a 415
    /// problem). `filename` is shown to the other side (the server keeps its last path component only). The upload
    /// is retried like every call (network failures, 429 with its `Retry-After`, 502–504) under one
    /// `Idempotency-Key` — `idempotencyKey`, or one made up for this upload — so the server stores it once however
    /// many attempts reach it. Pass your own key to make a retry across app launches safe too.
    public func upload(_ data: Data, type: String, filename: String? = nil, to interactionID: String,
                       idempotencyKey: String? = nil) -> AttachmentUpload {
        upload(.data(data), type: type, filename: filename, to: interactionID, idempotencyKey: idempotencyKey)
    }

    /// Uploads the file at `fileURL` as above, read from disk as it is sent (never loaded whole into memory; on
    /// Linux with chunked transfer encoding). `filename` defaults to the file's own name; pass another to show that
    /// one.
    public func upload(contentsOf fileURL: URL, type: String, filename: String? = nil, to interactionID: String,
                       idempotencyKey: String? = nil) -> AttachmentUpload {
        upload(.file(fileURL), type: type, filename: filename ?? fileURL.lastPathComponent, to: interactionID,
               idempotencyKey: idempotencyKey)
    }

    private func upload(_ body: UploadBody, type: String, filename: String?, to interactionID: String,
                        idempotencyKey: String?) -> AttachmentUpload {
        let (progress, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        let key = idempotencyKey ?? UUID().uuidString
        let task = Task {
            defer { continuation.finish() }
            if case .file(let fileURL) = body {
                // A file that cannot be read is the caller's to fix, not a network failure to retry.
                try FileHandle(forReadingFrom: fileURL).close()
            }
            let url = try attachmentsURL(interactionID, filename: filename)
            let delegate = UploadProgress(continuation)
            return try await retrying {
                try await authorizedRequest("POST", url, idempotencyKey: key, headers: ["Content-Type": type])
            } exchange: { request in
                let (data, response) = switch body {
                case .data(let bytes): try await session.upload(for: request, from: bytes, delegate: delegate)
                case .file(let fileURL): try await Self.upload(fileURL, request, on: session, delegate: delegate)
                }
                switch try Exchange(data, response) {
                case .value((let data, _)): return .value(try decode(Attachment.self, data))
                case .refused(let data, let response): return .refused(data, response)
                }
            }
        }
        return AttachmentUpload(progress: progress, idempotencyKey: key, task: task)
    }

    /// Sends `request` with the file at `fileURL` as its body, read as it is sent.
    ///
    /// On Apple platforms, an upload task from the file (with its `Content-Length`). FoundationNetworking reads such
    /// a file ahead asynchronously and, when the transfer ends before the file was read (a cancellation, a refusal
    /// while the body is still being sent), resumes the finished transfer and crashes the process; there the file
    /// is sent as a stream instead, read as libcurl asks for it, with chunked transfer encoding.
    static func upload(_ fileURL: URL, _ request: URLRequest, on session: URLSession,
                       delegate: UploadProgress) async throws -> (Data, URLResponse) {
        #if canImport(FoundationNetworking)
        guard let stream = InputStream(url: fileURL) else {
            throw Unretried(error: CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: fileURL.path]))
        }
        var streamed = request
        streamed.httpBodyStream = stream
        return try await session.data(for: streamed, delegate: delegate)
        #else
        return try await session.upload(for: request, fromFile: fileURL, delegate: delegate)
        #endif
    }

    /// `POST /v1/interactions/{id}/attachments`, with the file name in the query. Encoded by hand: the server reads
    /// a `+` as a space, which `URLComponents` leaves as it is.
    func attachmentsURL(_ interactionID: String, filename: String?) throws -> URL {
        let url = try url("/v1/interactions/\(Self.segment(interactionID))/attachments", [])
        guard let filename else { return url }
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let encoded = filename.addingPercentEncoding(withAllowedCharacters: unreserved) else {
            throw SwitchboardError.invalidResponse("bad URL")
        }
        components.percentEncodedQuery = "filename=" + encoded
        guard let withName = components.url else { throw SwitchboardError.invalidResponse("bad URL") }
        return withName
    }

    /// Downloads an attachment's bytes into the file at `fileURL`, streamed to disk as they arrive (never held whole
    /// in memory), and resumable: a download that was interrupted — in this call, which retries network failures
    /// like every call, or in an earlier one, even before the app was relaunched — goes on from where the file ends
    /// instead of starting over.
    ///
    /// For that, the download keeps the answer's `ETag` next to the file, in `<fileURL>.etag` (see
    /// ``DownloadedFile/etagFile``), and asks for the rest with `Range` and `If-Range`; should the bytes have changed
    /// meanwhile, the server sends the whole file, which replaces what was there. A file without its `.etag` is
    /// downloaded again from the start. The `.etag` file stays after the download completed, so downloading the
    /// same attachment into the same file again costs one small request; remove both files to free the space.
    /// A file at `fileURL` is overwritten. Download into a given file from one task at a time.
    ///
    /// Throws `SwitchboardError.problem` when the server refuses (404 for an attachment the user may not see, 403
    /// for an infected one…), `SwitchboardError.transport` when the network failed on every attempt (what arrived
    /// stays in the file for the next call), and a file-system error when the file cannot be written.
    @discardableResult
    public func download(_ attachmentID: String, to fileURL: URL) async throws -> DownloadedFile {
        let url = try url("/v1/attachments/\(Self.segment(attachmentID))", [])
        let sidecar = ResumePlan.sidecar(for: fileURL)
        // A part that does not fit the file starts the download over, once.
        for _ in 0 ..< 2 {
            let result = try await retrying {
                let plan = ResumePlan(existingSize: Self.size(of: fileURL),
                                      etag: try? String(contentsOf: sidecar, encoding: .utf8))
                return (try await authorizedRequest("GET", url, idempotencyKey: nil, headers: plan.headers), plan)
            } exchange: { request, plan in
                try await FileDownload.run(request, plan: plan, file: fileURL, sidecar: sidecar,
                                           configuration: transferConfiguration)
            }
            if case .finished(let size, let offset) = result {
                return DownloadedFile(url: fileURL, size: size, resumedFrom: offset)
            }
        }
        throw SwitchboardError.invalidResponse("the server's answers to the download do not fit together")
    }

    /// The size of the file at `url`; 0 when there is none.
    static func size(of url: URL) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// An attachment downloaded into a file by ``SwitchboardClient/download(_:to:)``.
public struct DownloadedFile: Sendable, Equatable {
    /// Where the bytes are: the URL the download was given.
    public let url: URL
    /// The file's size in bytes: the whole attachment's.
    public let size: Int64
    /// Where the download's last request started: 0 when the whole file was fetched, the size of a partial file
    /// when it was resumed, ``size`` when the file was complete already.
    public let resumedFrom: Int64

    /// A result as a download gives it (for tests and previews of code that uses one).
    public init(url: URL, size: Int64, resumedFrom: Int64) {
        self.url = url
        self.size = size
        self.resumedFrom = resumedFrom
    }

    /// The file the download keeps the attachment's `ETag` in, to resume from or revalidate the file:
    /// `<url>.etag`.
    public var etagFile: URL { ResumePlan.sidecar(for: url) }
}
