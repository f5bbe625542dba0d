import Coordination
import Foundation

/// One access-log record: what a request was and how it ended.
public struct AccessLogEntry: Sendable {
    /// When the request arrived.
    public var time: Date
    /// The request id.
    public var requestID: String
    /// The method.
    public var method: String
    /// The route template, or nil when no route matched (never the raw path, which may carry identifiers).
    public var route: String?
    /// The response status.
    public var status: Int
    /// Time from arrival to response, in seconds.
    public var duration: Double

    /// A record of one request.
    public init(time: Date, requestID: String, method: String, route: String?, status: Int, duration: Double) {
        self.time = time
        self.requestID = requestID
        self.method = method
        self.route = route
        self.status = status
        self.duration = duration
    }

    /// The record of `request`, which ended with `status` after `duration` seconds, now.
    public init(_ request: Request, status: Int, duration: Double) {
        self.init(time: Date(timeIntervalSinceNow: -duration), requestID: request.id, method: request.method,
                  route: request.route, status: status, duration: duration)
    }
}

/// Reports each request as it ends to a sink (the app counts it in metrics and writes an `AccessLogEntry` as a JSON
/// line), with its status and its time from arrival.
///
/// The sink is lent the request itself, not an entry: most requests are counted and not written (the log's level is
/// above them), and an entry made for each copied three of the request's strings and a timestamp to drop at once.
public struct AccessLogMiddleware: Middleware {
    /// What the sink is told: the request (lent for the call), its response's status and its time in seconds.
    public typealias Sink = @Sendable (_ request: Request, _ status: Int, _ duration: Double) -> Void
    private let sink: Sink

    /// Creates the middleware with the sink each request's end goes to.
    public init(sink: @escaping Sink) {
        self.sink = sink
    }

    /// Reports the outcome: a response's status, or 500 for an error no layer inside mapped to a response.
    public func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
        let status = outcome.responseStatus ?? 500
        sink(request, status, Double(ClockOrigin.nanosecondsNow() - request.arrivalNanoseconds) / 1e9)
    }
}
