import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an event connection does when the server answers its request with an error status: the one rule both the
/// interaction streams and the inbox follow.
enum StreamRefusal: Equatable {
    /// Try again after the usual backoff, or after the server's `Retry-After`.
    case later(retryAfter: Duration?)
    /// Try again at once: with whatever token the provider gives now.
    case freshToken
    /// Try again at once from the server's current state: it cannot resume from the last event id.
    case startOver
    /// Give up and tell the subscribers.
    case final(APIProblem)

    /// The decision for `response` with `body`; `unauthorizedBefore`: the previous attempt got a 401 already;
    /// `resuming`: the request carried a last event id.
    static func decide(_ response: HTTPURLResponse, body: Data, unauthorizedBefore: Bool, resuming: Bool) -> StreamRefusal {
        let status = response.statusCode
        if status == 408 || status == 429 || status >= 500 {
            return .later(retryAfter: RetryAfter.delay(response.value(forHTTPHeaderField: "Retry-After")))
        }
        if status == 401 && !unauthorizedBefore { return .freshToken }
        let problem = SwitchboardClient.problemDetails(body, status: status)
        if status == 400 && problem.type == "/problems/unknown-event-id" && resuming { return .startOver }
        return .final(problem)
    }

    /// The request of one attempt: `Accept: text/event-stream`, the bearer token, and `Last-Event-ID` when resuming.
    static func request(_ url: URL, policy: EventStreamPolicy, token: String, lastEventID: String?) -> URLRequest {
        var request = URLRequest(url: url, timeoutInterval: InteractionEventConnection.idleTimeout(policy))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("no-store", forHTTPHeaderField: "Cache-Control")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let lastEventID { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        return request
    }
}
