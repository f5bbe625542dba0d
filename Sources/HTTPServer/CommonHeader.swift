#if canImport(Glibc)
import Glibc
#endif

/// Header fields that most requests send, or that the server looks for in every request.
///
/// A request's head records which of these it carries, by name as spelt here, as it is read. Looking one of them up
/// (`HTTPHeaders[_: CommonHeader]`) in a head that lacks it then answers at once, without comparing names: most
/// requests carry no `Content-Length`, `X-Request-ID` or `If-None-Match`, and every request is asked for them.
public enum CommonHeader: Int, CaseIterable, Sendable {
    case host, accept, authorization, userAgent, acceptEncoding, acceptLanguage, connection, contentType,
         contentLength, transferEncoding, ifNoneMatch, idempotencyKey, lastEventID, xRequestID, cookie, origin,
         referer, cacheControl, xForwardedFor, xForwardedProto

    /// The field's name as clients usually spell it (names compare ignoring ASCII case).
    public var name: String { Self.names[rawValue] }

    /// The names, by raw value.
    static let names = ["Host", "Accept", "Authorization", "User-Agent", "Accept-Encoding", "Accept-Language",
                        "Connection", "Content-Type", "Content-Length", "Transfer-Encoding", "If-None-Match",
                        "Idempotency-Key", "Last-Event-ID", "X-Request-ID", "Cookie", "Origin", "Referer",
                        "Cache-Control", "X-Forwarded-For", "X-Forwarded-Proto"]

    /// The names' bytes, by raw value.
    static let utf8Names = names.map { Array($0.utf8) }

    /// The header whose name is spelt exactly `name`, if any.
    static func spelt(exactly name: String) -> CommonHeader? {
        let count = name.utf8.count
        let found = name.utf8.withContiguousStorageIfAvailable { bytes in
            utf8Names.firstIndex { $0.count == count && memcmp($0, bytes.baseAddress!, count) == 0 }
        }
        guard let index = found ?? names.firstIndex(of: name) else { return nil }
        return CommonHeader(rawValue: index)
    }

    /// This header's bit in a set of them.
    var bit: UInt32 { 1 << UInt32(rawValue) }
}
