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

/// POSTs one signed webhook with libcurl, on the worker's ``DeliveryEngine`` (its one thread carries every POST in
/// flight and keeps their connections); a name is resolved and checked first on one of the ``ResolverThreads``.
///
/// Why libcurl and not FoundationNetworking's URLSession (itself built on libcurl on Linux): the connection must go
/// to the addresses that were checked, not to whatever a second resolution returns (DNS rebinding), and curl's
/// `CURLOPT_RESOLVE` pins exactly that while keeping the URL's host for TLS verification and SNI; URLSession has no
/// such hook. curl also gives a hard total timeout, no redirects, no proxy from the environment and http(s) only,
/// each one option, and its multi interface runs many POSTs on one thread, off the service's cooperative threads.
enum WebhookPost {
    /// Resolves and checks the target, then POSTs `body` with `headers`, within `timeout`.
    static func send(to target: WebhookTarget, headers: [String], body: [UInt8], timeout: Duration,
                     allowPrivate: Bool, engine: DeliveryEngine, resolvers: ResolverThreads) async -> AttemptResult {
        let clock = ContinuousClock()
        let start = clock.now
        let milliseconds = max(1, Int(timeout.wholeMilliseconds))
        let isLiteral = TargetAddress(literal: target.host) != nil
        return await withCheckedContinuation { continuation in
            let begin: @Sendable () -> Void = {
                let addresses: [TargetAddress]
                do throws(WebhookTargetError) {
                    addresses = try target.allowedAddresses(allowPrivate: allowPrivate)
                } catch {
                    let outcome: AttemptResult.Outcome = error.refusesTheTarget ? .refused : .networkError
                    continuation.resume(returning: AttemptResult(outcome: outcome, status: nil, error: error.description,
                                                                 retryAfterSeconds: nil, latency: clock.now - start))
                    return
                }
                // An IP literal connects to itself; a name is pinned to the addresses just checked.
                let resolve: String? = isLiteral ? nil
                    : "\(target.host):\(target.port):" + addresses.map { address in
                        if case .v6 = address { return "[\(address.text)]" }
                        return address.text
                    }.joined(separator: ",")
                engine.start(DeliveryEngine.Post(url: target.url, resolve: resolve, headers: headers, body: body,
                                                 timeoutMilliseconds: milliseconds) { result in
                    continuation.resume(returning: attemptResult(result, timeoutMilliseconds: milliseconds,
                                                                 latency: clock.now - start))
                })
            }
            // A literal needs no lookup (nothing blocks); a name's lookup does, for as long as DNS takes.
            if isLiteral { begin() } else { resolvers.run(begin) }
        }
    }

    /// What curl's outcome of a POST means for the attempt log.
    static func attemptResult(_ result: sb_http_result, timeoutMilliseconds: Int, latency: Duration) -> AttemptResult {
        var result = result
        let error = withUnsafeBytes(of: &result.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard result.curl_code == 0 else {
            let timedOut = result.curl_code == 28 // CURLE_OPERATION_TIMEDOUT
            return AttemptResult(outcome: timedOut ? .timeout : .networkError, status: nil,
                                 error: timedOut ? "no answer within \(timeoutMilliseconds) ms" : error,
                                 retryAfterSeconds: nil, latency: latency)
        }
        let status = Int(result.status)
        let outcome: AttemptResult.Outcome = (200 ..< 300).contains(status) ? .delivered : status == 410 ? .gone : .httpError
        guard outcome != .delivered else {
            return AttemptResult(outcome: outcome, status: status, error: nil, retryAfterSeconds: nil, latency: latency)
        }
        let retryAfter = withUnsafeBytes(of: &result.retry_after) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return AttemptResult(outcome: outcome, status: status, error: "the endpoint answered \(status)",
                             retryAfterSeconds: RetryAfter.seconds(retryAfter, now: Date()), latency: latency)
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
