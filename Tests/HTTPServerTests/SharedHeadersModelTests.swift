@testable import HTTPServer
import TestSupport
import Testing

/// A header list made with `HTTPHeaders(sharing:)` (a page's prebuilt fields, sent with many responses) against a
/// plain reference: seeded random adds, sets and reservations on copies of a shared list read back the same through
/// the iterator, in place (as the server queues them), by name and by ``CommonHeader``; and the shared list itself,
/// and every other copy of it, stays as it was.
@Suite(.timeLimit(.minutes(5))) struct SharedHeadersModelTests {
    static let names = ["ETag", "etag", "X-Request-ID", "x-request-id", "Content-Type", "Cache-Control", "Vary", ""]

    @Test(arguments: [UInt64(7), 64, 2027])
    func copiesOfASharedListAgreeWithTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 300 {
            var prebuilt = HTTPHeaders()
            var base: [(name: String, value: String)] = []
            for index in 0 ..< Int.random(in: 0 ... 4, using: &random) {
                let name = Self.names.randomElement(using: &random)!
                prebuilt.add(name, "base\(index)")
                base.append((name, "base\(index)"))
            }
            let shared = HTTPHeaders(sharing: prebuilt)
            Self.expect(shared, equals: base)
            // Two copies changed apart: neither shows the other's fields, nor does the shared list.
            for _ in 0 ..< 2 {
                var headers = shared
                var reference = base
                for step in 0 ..< Int.random(in: 0 ... 5, using: &random) {
                    let name = Self.names.randomElement(using: &random)!
                    let value = "v\(step)"
                    switch Int.random(in: 0 ..< 5, using: &random) {
                    case 0, 1:
                        headers.add(name, value)
                        reference.append((name, value))
                    case 2, 3:
                        // By name, or by kind when the name is one's spelling (the request id is set so).
                        if let header = CommonHeader.spelt(exactly: name), Bool.random(using: &random) {
                            headers.set(header, value)
                        } else {
                            headers.set(name, value)
                        }
                        reference.removeAll { $0.name.lowercased() == name.lowercased() }
                        reference.append((name, value))
                    default:
                        headers.reserveCapacity(reference.count + 2)
                    }
                    Self.expect(headers, equals: reference)
                }
            }
            Self.expect(shared, equals: base)
        }
    }

    static func expect(_ headers: HTTPHeaders, equals reference: [(name: String, value: String)],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(headers.map(\.name) == reference.map(\.name), sourceLocation: sourceLocation)
        #expect(headers.map(\.value) == reference.map(\.value), sourceLocation: sourceLocation)
        #expect(headers.count == reference.count, sourceLocation: sourceLocation)
        var inPlace: [String] = []
        headers.forEachInPlace { inPlace.append("\($0.name): \($0.value)") }
        #expect(inPlace == reference.map { "\($0.name): \($0.value)" }, sourceLocation: sourceLocation)
        for name in names {
            #expect(headers[name] == reference.first { $0.name.lowercased() == name.lowercased() }?.value,
                    sourceLocation: sourceLocation)
        }
        for header in [CommonHeader.xRequestID, .contentLength, .ifNoneMatch, .contentType, .cacheControl] {
            let value = reference.first { $0.name.lowercased() == header.name.lowercased() }?.value
            #expect(headers[header] == value, sourceLocation: sourceLocation)
            #expect(headers.contains(header) == (value != nil), sourceLocation: sourceLocation)
        }
    }
}
