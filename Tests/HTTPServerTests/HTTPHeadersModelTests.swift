import HTTPServer
import TestSupport
import Testing

/// `HTTPHeaders` against a plain reference (a list of pairs, names compared after lowercasing): seeded random adds,
/// sets and lookups over names that differ only in case, in length, or not at all.
@Suite struct HTTPHeadersModelTests {
    static let names = ["ETag", "etag", "ETAG", "E", "X-Request-ID", "x-request-id", "X-Request-IDs", "Content-Type",
                        "content-typ", "Cache-Control", ""]

    @Test(arguments: [UInt64(3), 41, 2026])
    func addSetAndLookupAgreeWithTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 200 {
            var headers = HTTPHeaders()
            var reference: [(name: String, value: String)] = []
            for step in 0 ..< Int.random(in: 0 ... 12, using: &random) {
                let name = Self.names.randomElement(using: &random)!
                let value = "v\(step)"
                if Bool.random(using: &random) {
                    headers.add(name, value)
                    reference.append((name, value))
                } else {
                    headers.set(name, value)
                    reference.removeAll { $0.name.lowercased() == name.lowercased() }
                    reference.append((name, value))
                }
            }
            #expect(headers.map(\.name) == reference.map(\.name))
            #expect(headers.map(\.value) == reference.map(\.value))
            for name in Self.names {
                #expect(headers[name] == reference.first { $0.name.lowercased() == name.lowercased() }?.value)
            }
        }
    }
}
