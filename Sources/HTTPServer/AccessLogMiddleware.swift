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
        defer {
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            sink(AccessLogEntry(time: time, requestID: request.id, method: request.method, route: request.route,
                                status: status, duration: seconds))
        }
        let response = try await next(request)
        status = response.status
        return response
    }
}
