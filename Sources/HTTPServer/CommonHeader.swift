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
        var name = name
        return name.withUTF8(spelt(exactly:))
    }

    /// The header whose name is spelt exactly as `bytes`, if any.
    static func spelt(exactly bytes: UnsafeBufferPointer<UInt8>) -> CommonHeader? {
        for index in utf8Names.indices where utf8Names[index].count == bytes.count {
            if utf8Names[index].withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
                return CommonHeader(rawValue: index)
            }
        }
        return nil
    }

    /// What a field's name says of the list it joins: the header it is spelt exactly as (nil: none of them), and
    /// `known`, false for one of them spelt otherwise (`content-length`), whose lookups must then compare names.
    static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> (header: CommonHeader?, known: Bool) {
        if let header = spelt(exactly: bytes) { return (header, true) }
        let spelledOtherwise = utf8Names.contains { name in
            name.count == bytes.count && name.withUnsafeBufferPointer { String.equalIgnoringASCIICase(bytes, $0) }
        }
        return (nil, !spelledOtherwise)
    }

    /// This header's bit in a set of them.
    var bit: UInt32 { 1 << UInt32(rawValue) }
}
