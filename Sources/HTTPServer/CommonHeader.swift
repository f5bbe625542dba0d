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

    /// `names` as static literals: their bytes read in place, with nothing retained.
    static let literals: [StaticString] = [
        "Host", "Accept", "Authorization", "User-Agent", "Accept-Encoding", "Accept-Language", "Connection",
        "Content-Type", "Content-Length", "Transfer-Encoding", "If-None-Match", "Idempotency-Key", "Last-Event-ID",
        "X-Request-ID", "Cookie", "Origin", "Referer", "Cache-Control", "X-Forwarded-For", "X-Forwarded-Proto"]

    /// By a name's length, which headers have a name that long (a bit each): most names are compared with two or
    /// three of them, and the rest with none.
    private static let byLength: [UInt32] = {
        var masks = [UInt32](repeating: 0, count: 1 + literals.map(\.utf8CodeUnitCount).max()!)
        for header in allCases { masks[literals[header.rawValue].utf8CodeUnitCount] |= header.bit }
        return masks
    }()

    /// The headers whose names are as long as `bytes`.
    private static func sameLength(as bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        bytes.count < byLength.count ? byLength[bytes.count] : 0
    }

    /// The header whose name is spelt exactly `name`, if any.
    static func spelt(exactly name: String) -> CommonHeader? {
        var name = name
        return name.withUTF8(spelt(exactly:))
    }

    /// The header whose name is spelt exactly as `bytes`, if any.
    static func spelt(exactly bytes: UnsafeBufferPointer<UInt8>) -> CommonHeader? {
        var candidates = sameLength(as: bytes)
        while candidates != 0 {
            let header = CommonHeader(rawValue: candidates.trailingZeroBitCount)!
            if memcmp(literals[header.rawValue].utf8Start, bytes.baseAddress!, bytes.count) == 0 { return header }
            candidates &= candidates - 1
        }
        return nil
    }

    /// What a field's name says of the list it joins: the header it is spelt exactly as (nil: none of them), and
    /// `known`, false for one of them spelt otherwise (`content-length`), whose lookups must then compare names.
    static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> (header: CommonHeader?, known: Bool) {
        var candidates = sameLength(as: bytes), known = true
        while candidates != 0 {
            let header = CommonHeader(rawValue: candidates.trailingZeroBitCount)!
            let literal = literals[header.rawValue].utf8Start
            if memcmp(literal, bytes.baseAddress!, bytes.count) == 0 { return (header, true) }
            if known && header.isName(ignoringCase: bytes) { known = false }
            candidates &= candidates - 1
        }
        return (nil, known)
    }

    /// Whether `bytes` are this header's name, ignoring ASCII case (names of other lengths at once).
    func isName(ignoringCase bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let literal = Self.literals[rawValue]
        return literal.utf8CodeUnitCount == bytes.count
            && String.equalIgnoringASCIICase(bytes, UnsafeBufferPointer(start: literal.utf8Start, count: bytes.count))
    }

    /// This header's bit in a set of them.
    var bit: UInt32 { 1 << UInt32(rawValue) }
}
