import Foundation
@testable import HTTPServer
import Testing
import TestSupport

/// What a handler sees of a request's head, read off the socket by the real server, against what the client sent:
/// seeded random heads (common names spelt as usual and otherwise, names of no kind, repeated names, empty, long and
/// non-ASCII values), each field in order, lookups by name (in any case) and by kind, and the count.
@Suite("A request's head as read", .timeLimit(.minutes(5)))
struct RequestHeadTests {
    /// What the route echoes of the head it was given.
    struct Seen: Codable, Sendable {
        var fields: [[String]]
        var count: Int
        var byName: [String?]
        var byKind: [String?]
        /// The values by kind read where they lie (``HTTPHeaders/value(_:)``), made text by the route.
        var inPlace: [String?]
        var contains: [Bool]
    }

    static let lookups = ["authorization", "AUTHORIZATION", "Authorization", "accept", "User-Agent", "user-agent",
                          "X-App-Version", "x-app-version", "X-Missing", "If-None-Match", "idempotency-key", "Host",
                          "x-custom-1", "X-Custom-1", ""]

    static func routes(_ router: inout Router) {
        router.get("/head") { request in
            let seen = Seen(fields: request.headers.map { [$0.name, $0.value] }, count: request.headers.count,
                            byName: lookups.map { request.headers[$0] },
                            byKind: CommonHeader.allCases.map { request.headers[$0] },
                            inPlace: CommonHeader.allCases.map { header in
                                request.headers.value(header)?.withBytes { String(decoding: $0, as: UTF8.self) }
                            },
                            contains: CommonHeader.allCases.map { request.headers.contains($0) })
            return try Response.json(seen)
        }
    }

    static let names: [String] = {
        let common = CommonHeader.allCases.map(\.name).filter {
            !["Host", "Connection", "Content-Length", "Transfer-Encoding"].contains($0)
        }
        return common + common.map { $0.lowercased() } + common.map { $0.uppercased() }
            + ["X-Custom-1", "x-custom-1", "X-App-Version", "X-Device-ID", "X-" + String(repeating: "Long", count: 12)]
    }()

    static func value(_ random: inout SplitMix64) -> String {
        switch Int.random(in: 0 ..< 6, using: &random) {
        case 0: return ""
        case 1: return "é漢 ü"
        case 2: return "Bearer sb_live_" + String(repeating: "k", count: Int.random(in: 1 ... 60, using: &random))
        default:
            let length = Int.random(in: 1 ... 40, using: &random)
            var text = String(decoding: (0 ..< length).map { _ in UInt8.random(in: 0x21 ... 0x7E, using: &random) }, as: UTF8.self)
            if length > 2, Bool.random(using: &random) { text.insert(" ", at: text.index(text.startIndex, offsetBy: length / 2)) }
            return text
        }
    }

    @Test(arguments: [UInt64(31), 32, 33])
    func everyFieldAndLookupIsWhatTheClientSent(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        try await withTestServer(Self.routes) { _, port in
            for round in 0 ..< 60 {
                var sent: [(name: String, value: String)] = [("Host", "x")]
                for _ in 0 ..< Int.random(in: 0 ... 14, using: &random) {
                    sent.append((Self.names.randomElement(using: &random)!, Self.value(&random)))
                }
                sent.append(("Connection", "close"))
                let text = "GET /head HTTP/1.1\r\n" + sent.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n"
                let response = try await rawRequest(port: port, text)
                #expect(response.status == 200, "seed \(seed) round \(round): \(response.status)")
                let seen = try JSONDecoder().decode(Seen.self, from: Data(response.text.utf8))
                #expect(seen.fields == sent.map { [$0.name, $0.value] }, "seed \(seed) round \(round)")
                #expect(seen.count == sent.count, "seed \(seed) round \(round)")
                func first(_ name: String) -> String? { sent.first { $0.name.lowercased() == name.lowercased() }?.value }
                #expect(seen.byName == Self.lookups.map(first), "seed \(seed) round \(round)")
                #expect(seen.byKind == CommonHeader.allCases.map { first($0.name) }, "seed \(seed) round \(round)")
                #expect(seen.inPlace == seen.byKind, "seed \(seed) round \(round)")
                #expect(seen.contains == CommonHeader.allCases.map { first($0.name) != nil }, "seed \(seed) round \(round)")
            }
        }
    }
}
