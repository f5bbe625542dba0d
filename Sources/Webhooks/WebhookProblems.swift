import HTTPServer

// The one place where the webhooks domain's errors become problem responses (RFC 9457).

extension WebhookError: ProblemConvertible {
    /// 404 for an unknown endpoint or message, 409 at the endpoint limit.
    public var problem: Problem {
        switch self {
        case .noSuchEndpoint:
            return .notFound("No such webhook endpoint.")
        case .noSuchMessage:
            return .notFound("No such webhook message.")
        case .endpointLimit(let limit):
            return Problem(status: 409, title: "Conflict", detail: "A tenant may have at most \(limit) webhook endpoints.")
        }
    }
}

extension WebhookTargetError: ProblemConvertible {
    /// 400 naming `url`: why the URL is unusable, or that it reaches an address webhooks may not (with how to allow
    /// private targets in local development).
    public var problem: Problem {
        if case .invalidURL(let why) = self { return .badRequest(why, parameter: "url") }
        return .badRequest("\(description): webhooks reach only public addresses. For local development, "
                           + "start the server with WEBHOOK_ALLOW_PRIVATE_TARGETS=1.", parameter: "url")
    }
}
