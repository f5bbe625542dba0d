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

/// Reports one `AccessLogEntry` per request to a sink (the app writes it as a JSON line and to metrics).
public struct AccessLogMiddleware: Middleware {
    private let sink: @Sendable (AccessLogEntry) -> Void

    /// Creates the middleware with the sink each entry goes to.
    public init(sink: @escaping @Sendable (AccessLogEntry) -> Void) {
        self.sink = sink
    }

    public func respond(to request: Request, next: Responder) async throws -> Response {
        let time = Date()
        let start = ContinuousClock.now
        var status = 500
        defer { log(request, status: status, time: time, since: start) }
        let response = try await next(request)
        status = response.status
        return response
    }

    /// Logs only immediate answers: when there is none, the async chain runs and logs the request.
    public func respondImmediately(to request: Request, next: (Request) -> Response?) -> Response? {
        let time = Date()
        let start = ContinuousClock.now
        guard let response = next(request) else { return nil }
        log(request, status: response.status, time: time, since: start)
        return response
    }

    private func log(_ request: Request, status: Int, time: Date, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.inSeconds
        sink(AccessLogEntry(time: time, requestID: request.id, method: request.method, route: request.route,
                            status: status, duration: seconds))
    }
}
