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
}

/// Reports one `AccessLogEntry` per request to a sink (the app writes it as a JSON line and to metrics), timed from
/// the request's arrival.
public struct AccessLogMiddleware: Middleware {
    private let sink: @Sendable (AccessLogEntry) -> Void

    /// Creates the middleware with the sink each entry goes to.
    public init(sink: @escaping @Sendable (AccessLogEntry) -> Void) {
        self.sink = sink
    }

    /// Logs the outcome: a response's status, or 500 for an error no layer inside mapped to a response.
    public func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
        let status = outcome.responseStatus ?? 500
        let seconds = Double(ClockOrigin.nanosecondsNow() - request.arrivalNanoseconds) / 1e9
        sink(AccessLogEntry(time: Date(timeIntervalSinceNow: -seconds), requestID: request.id, method: request.method,
                            route: request.route, status: status, duration: seconds))
    }
}
