import Synchronization

/// Gives every request an id: the client's `X-Request-ID` when sane (1–128 visible ASCII characters),
/// else a generated one; echoes it on the response.
public struct RequestIDMiddleware: Middleware {
    /// Creates the middleware.
    public init() {}

    public func respond(to request: Request, next: Responder) async throws -> Response {
        var request = request
        request.id = RequestIDMiddleware.id(for: request)
        var response = try await next(request)
        response.headers.set("X-Request-ID", request.id)
        return response
    }

    public func respondImmediately(to request: Request, next: (Request) -> Response?) -> Response? {
        var request = request
        request.id = RequestIDMiddleware.id(for: request)
        guard var response = next(request) else { return nil }
        response.headers.set("X-Request-ID", request.id)
        return response
    }

    /// The id for `request`: its sane `X-Request-ID`, or a new one.
    public static func id(for request: Request) -> String {
        if let supplied = request.headers["X-Request-ID"], isSane(supplied) { return supplied }
        return RequestIDGenerator.shared.next()
    }

    /// Whether a client-supplied id may be used as is.
    public static func isSane(_ id: String) -> Bool {
        let utf8 = id.utf8
        return !utf8.isEmpty && utf8.count <= 128 && utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}

/// Generates unique request ids cheaply: a random per-process prefix and a counter.
final class RequestIDGenerator: Sendable {
    static let shared = RequestIDGenerator()

    private let prefix: String
    private let counter = Atomic<UInt64>(0)

    private init() {
        let random = UInt64.random(in: 0 ... UInt64.max)
        prefix = String(random, radix: 16)
    }

    func next() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + "-" + String(n, radix: 16)
    }
}
