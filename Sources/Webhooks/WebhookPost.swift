import Coordination
import CCurl
import Foundation

/// What one delivery attempt came to, as the attempt log records it.
public struct AttemptResult: Sendable, Equatable {
    /// How the attempt ended, as the attempt log and the metrics name it.
    public enum Outcome: String, Sendable, CaseIterable {
        /// A 2xx answer.
        case delivered
        /// An answer outside 2xx (410 excepted).
        case httpError = "http_error"
        /// `410 Gone`: the endpoint is disabled.
        case gone
        /// No complete answer within the timeout.
        case timeout
        /// No answer: refused connection, TLS failure, DNS failure.
        case networkError = "network_error"
        /// The target resolved to an address deliveries may not reach; nothing was sent.
        case refused
    }

    /// How it ended.
    public var outcome: Outcome
    /// The response status, when an answer came.
    public var status: Int?
    /// What went wrong, for the tenant to read; nil when delivered.
    public var error: String?
    /// The answer's `Retry-After`, in seconds from now, when it had a usable one.
    public var retryAfterSeconds: Int?
    /// Time from the start of the attempt to its end (resolution included).
    public var latency: Duration
}

/// POSTs one signed webhook with libcurl, on one of the delivery threads (curl's easy interface blocks), reusing that
/// thread's connections.
///
/// Why libcurl and not FoundationNetworking's URLSession (itself built on libcurl on Linux): the connection must go
/// to the addresses that were checked, not to whatever a second resolution returns (DNS rebinding), and curl's
/// `CURLOPT_RESOLVE` pins exactly that while keeping the URL's host for TLS verification and SNI; URLSession has no
/// such hook. curl also gives a hard total timeout, no redirects, no proxy from the environment and http(s) only,
/// each one option, and its blocking call on a dedicated thread keeps the service's two cooperative threads free.
enum WebhookPost {
    /// Resolves and checks the target, then POSTs `body` with `headers`, within `timeout`.
    static func send(to target: WebhookTarget, headers: [String], body: [UInt8], timeout: Duration,
                     allowPrivate: Bool, on threads: DeliveryThreads) async -> AttemptResult {
        await withCheckedContinuation { continuation in
            threads.run { handle in
                continuation.resume(returning: perform(target, headers, body, timeout, allowPrivate, handle))
            }
        }
    }

    private static func perform(_ target: WebhookTarget, _ headers: [String], _ body: [UInt8], _ timeout: Duration,
                                _ allowPrivate: Bool, _ handle: UnsafeMutableRawPointer?) -> AttemptResult {
        let clock = ContinuousClock()
        let start = clock.now
        let addresses: [TargetAddress]
        do {
            addresses = try target.allowedAddresses(allowPrivate: allowPrivate)
        } catch {
            let outcome: AttemptResult.Outcome = error.refusesTheTarget ? .refused : .networkError
            return AttemptResult(outcome: outcome, status: nil, error: error.description, retryAfterSeconds: nil,
                                 latency: clock.now - start)
        }
        // An IP literal connects to itself; a name is pinned to the addresses just checked.
        let resolve: String? = TargetAddress(literal: target.host) != nil ? nil
            : "\(target.host):\(target.port):" + addresses.map { address in
                if case .v6 = address { return "[\(address.text)]" }
                return address.text
            }.joined(separator: ",")
        let milliseconds = max(1, Int(timeout.wholeMilliseconds))
        var result = sb_http_result()
        let cHeaders = headers.map { strdup($0) }
        defer { cHeaders.forEach { free($0) } }
        cHeaders.map { UnsafePointer($0) }.withUnsafeBufferPointer { headerPointers in
            body.withUnsafeBufferPointer { bodyPointer in
                sb_curl_post(handle, target.url, resolve, headerPointers.baseAddress, headerPointers.count,
                             bodyPointer.baseAddress, bodyPointer.count, milliseconds, &result)
            }
        }
        let latency = clock.now - start
        let error = withUnsafeBytes(of: &result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let retryAfter = withUnsafeBytes(of: &result.retry_after) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard result.curl_code == 0 else {
            let timedOut = result.curl_code == 28 // CURLE_OPERATION_TIMEDOUT
            return AttemptResult(outcome: timedOut ? .timeout : .networkError, status: nil,
                                 error: timedOut ? "no answer within \(milliseconds) ms" : error,
                                 retryAfterSeconds: nil, latency: latency)
        }
        let status = Int(result.status)
        let outcome: AttemptResult.Outcome = (200 ..< 300).contains(status) ? .delivered : status == 410 ? .gone : .httpError
        return AttemptResult(outcome: outcome, status: status,
                             error: outcome == .delivered ? nil : "the endpoint answered \(status)",
                             retryAfterSeconds: outcome == .delivered ? nil : RetryAfter.seconds(retryAfter, now: Date()),
                             latency: latency)
    }
}

/// Parses `Retry-After`: delay seconds, or an HTTP date (IMF-fixdate).
enum RetryAfter {
    /// Seconds from `now`; nil when absent or unreadable. A date in the past is 0.
    static func seconds(_ value: String, now: Date) -> Int? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if let seconds = Int(text) { return seconds >= 0 ? seconds : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, Int(date.timeIntervalSince(now).rounded(.up)))
    }
}
