/// Maps every thrown error to an `application/problem+json` response, so no error leaves as HTML or empty.
///
/// `ProblemConvertible` errors carry their own problem; `map` may translate other error types (from modules
/// that must not know HTTP); anything left becomes a 500 whose detail is not leaked, and `report` sees it.
public struct ErrorMiddleware: Middleware {
    private let map: @Sendable (any Error) -> Problem?
    private let report: @Sendable (Request, any Error) -> Void

    /// Creates the middleware.
    public init(map: @escaping @Sendable (any Error) -> Problem? = { _ in nil },
                report: @escaping @Sendable (Request, any Error) -> Void = { _, _ in }) {
        self.map = map
        self.report = report
    }

    /// Turns an error into its problem response.
    public func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
        // A response passes untouched, and is not copied to be looked at (`responseStatus` reads it in place).
        guard outcome.responseStatus == nil, case .failure(let error) = outcome else { return }
        if let problem = map(error) {
            outcome = .success(problem.response(requestID: request.id))
        } else {
            outcome = .success(ErrorMiddleware.response(for: error, request: request, report: report))
        }
    }

    /// The problem response for `error`.
    static func response(for error: any Error, request: Request,
                         report: (Request, any Error) -> Void = { _, _ in }) -> Response {
        if let convertible = error as? any ProblemConvertible {
            return convertible.problem.response(requestID: request.id)
        }
        if error is CancellationError {
            return Problem(status: 503, title: "Service Unavailable", detail: "The request was cancelled.")
                .response(requestID: request.id)
        }
        report(request, error)
        return Problem(status: 500, title: "Internal Server Error", detail: "An unexpected error occurred.")
            .response(requestID: request.id)
    }
}
