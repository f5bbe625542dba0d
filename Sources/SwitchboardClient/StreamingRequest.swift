import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One streaming HTTP request: its response head, then its body chunk by chunk as the network delivers it.
///
/// Built on a data delegate rather than `URLSession.bytes(for:)`, which FoundationNetworking lacks on Linux.
/// Each request gets a session of its own (a session's delegate is fixed); ending the iteration — by cancellation,
/// `break` or dropping the stream — cancels the request and invalidates that session, which releases the delegate.
enum StreamingRequest {
    /// A part of the response.
    enum Part: Sendable {
        case head(HTTPURLResponse)
        case bytes(Data)
    }

    /// Starts `request` on a session configured by `configuration`; the stream ends with the response body, and
    /// throws the transport error if the request fails (a timeout included).
    static func start(_ request: URLRequest, configuration: URLSessionConfiguration) -> AsyncThrowingStream<Part, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Part.self)
        let session = URLSession(configuration: configuration, delegate: Delegate(continuation),
                                 delegateQueue: nil)
        let task = session.dataTask(with: request)
        continuation.onTermination = { _ in session.invalidateAndCancel() }
        task.resume()
        return stream
    }

    /// Forwards the session's callbacks into the stream; it holds nothing but the (thread-safe) continuation.
    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        private let continuation: AsyncThrowingStream<Part, any Error>.Continuation

        init(_ continuation: AsyncThrowingStream<Part, any Error>.Continuation) {
            self.continuation = continuation
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            if let response = response as? HTTPURLResponse {
                continuation.yield(.head(response))
                completionHandler(.allow)
            } else {
                continuation.finish(throwing: SwitchboardError.invalidResponse("not HTTP"))
                completionHandler(.cancel)
            }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            continuation.yield(.bytes(data))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        }
    }
}
