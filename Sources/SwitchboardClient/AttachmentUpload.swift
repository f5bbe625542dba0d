import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An upload under way, as ``SwitchboardClient/upload(_:type:filename:to:idempotencyKey:)`` starts it: follow
/// ``progress``, then await ``value()`` for the attachment to send with a message.
///
/// The upload runs whether or not anyone awaits it; ``cancel()`` stops it.
public struct AttachmentUpload: Sendable {
    /// How many bytes of the file have been sent so far, as the network layer reports them, rising to the file's
    /// size once it was all sent. It keeps only the newest value for a slow reader, and finishes when the upload
    /// ends, however it ends. One reader only.
    ///
    /// An attempt that failed on the network is retried with the same idempotency key (the server stores the file
    /// once), sending the file again: the count then starts again from zero.
    public let progress: AsyncStream<Int64>
    /// The `Idempotency-Key` every attempt of this upload carries (the one given, or the one made up for it): keep
    /// it to retry the upload after a relaunch without storing the file twice.
    public let idempotencyKey: String
    /// The upload: its retries, then the answer.
    let task: Task<Attachment, any Error>

    /// The uploaded attachment's metadata, once the server stored it; throws `SwitchboardError.problem` when the
    /// server refused it (415: not an accepted type, or the bytes are not of the declared one; 413: too large; 507:
    /// the tenant's storage is full; 404, 409…), `SwitchboardError.transport` when the network failed on every
    /// attempt, and a file-system error when the file cannot be read. Cancelling the task awaiting it cancels the
    /// upload.
    public func value() async throws -> Attachment {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Stops the upload; ``value()`` then throws `CancellationError`.
    public func cancel() {
        task.cancel()
    }
}

/// What an upload sends: bytes in memory, or a file read as it is sent.
enum UploadBody: Sendable {
    case data(Data)
    case file(URL)
}

/// Forwards the network layer's count of bytes sent to an upload's progress stream; it holds nothing but the
/// (thread-safe) continuation.
final class UploadProgress: NSObject, URLSessionTaskDelegate, Sendable {
    private let continuation: AsyncStream<Int64>.Continuation

    init(_ continuation: AsyncStream<Int64>.Continuation) {
        self.continuation = continuation
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        continuation.yield(totalBytesSent)
    }
}
