import Synchronization

/// Gives every request an id: the client's `X-Request-ID` when sane (1–128 visible ASCII characters),
/// else a generated one; echoes it on the response.
public struct RequestIDMiddleware: Middleware {
    /// Creates the middleware.
    public init() {}

    /// Gives the request its id.
    public func prepare(_ request: inout Request) throws {
        request.id = RequestIDMiddleware.id(for: request)
    }

    /// Echoes the id on the response.
    public func complete(_ request: Request, _ outcome: inout Result<Response, any Error>) {
        outcome.updateResponse { $0.headers.set(.xRequestID, request.id) }
    }

    /// The id for `request`: its sane `X-Request-ID`, or a new one.
    public static func id(for request: Request) -> String {
        if let supplied = request.headers[.xRequestID], isSane(supplied) { return supplied }
        return RequestIDGenerator.shared.next()
    }

    /// Whether a client-supplied id may be used as is.
    public static func isSane(_ id: String) -> Bool {
        let utf8 = id.utf8
        return !utf8.isEmpty && utf8.count <= 128 && utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}

/// Generates unique request ids cheaply: a random per-process prefix and a counter, both in lowercase hex.
///
/// The prefix is 32 random bits, so that the ids of a process's first 16,777,215 requests are at most 15 bytes
/// (8 + 1 + 6): a string that short is held inline, and making, copying and dropping the id allocates and counts
/// nothing.
final class RequestIDGenerator: Sendable {
    static let shared = RequestIDGenerator()

    /// The prefix and its dash, as bytes.
    private let prefix: [UInt8]
    private let counter = Atomic<UInt64>(0)

    private convenience init() {
        self.init(prefix: UInt64(UInt32.random(in: 0 ... UInt32.max)))
    }

    /// A generator whose ids start with `prefix` in hex, for tests.
    init(prefix: UInt64) {
        self.prefix = Array((String(prefix, radix: 16) + "-").utf8)
    }

    func next() -> String {
        RequestIDGenerator.format(prefix, counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// `prefix` followed by `n` in lowercase hex without leading zeros, written in one go (this runs per request).
    static func format(_ prefix: [UInt8], _ n: UInt64) -> String {
        let digits = max(1, (64 - n.leadingZeroBitCount + 3) / 4)
        return String(unsafeUninitializedCapacity: prefix.count + digits) { buffer in
            _ = buffer.initialize(fromContentsOf: prefix)
            var value = n
            for index in stride(from: prefix.count + digits - 1, through: prefix.count, by: -1) {
                let digit = UInt8(truncatingIfNeeded: value & 0xF)
                buffer[index] = digit < 10 ? 0x30 + digit : 0x57 + digit
                value >>= 4
            }
            return prefix.count + digits
        }
    }
}
