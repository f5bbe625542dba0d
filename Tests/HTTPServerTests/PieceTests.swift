import Foundation
import HTTPServer
import Testing

@Suite(.timeLimit(.minutes(5))) struct PieceTests {
    @Test func requestIDSanity() {
        #expect(RequestIDMiddleware.isSane("abc-123_XYZ"))
        #expect(!RequestIDMiddleware.isSane(""))
        #expect(!RequestIDMiddleware.isSane("has space"))
        #expect(!RequestIDMiddleware.isSane("ünïcode"))
        #expect(!RequestIDMiddleware.isSane(String(repeating: "a", count: 129)))
        #expect(RequestIDMiddleware.isSane(String(repeating: "a", count: 128)))
    }

    @Test func generatedRequestIDsAreUnique() async throws {
        var router = Router()
        router.use(RequestIDMiddleware())
        router.get("/") { request in Response(status: 200, headers: ["X-Seen": request.id]) }
        let responder = router.buildResponder()
        var seen = Set<String>()
        for _ in 0 ..< 100 {
            let response = try await responder.respond(to: Request(method: "GET", path: "/"))
            seen.insert(response.headers["X-Request-ID"]!)
        }
        #expect(seen.count == 100)
    }

    @Test func headersAreCaseInsensitive() {
        var headers: HTTPHeaders = ["Content-Type": "a"]
        #expect(headers["content-type"] == "a")
        headers.set("CONTENT-TYPE", "b")
        #expect(headers.count == 1)
        #expect(headers["Content-Type"] == "b")
    }

    @Test func problemBodyFollowsRFC9457() throws {
        let response = Problem.badRequest("limit must be 1-100", parameter: "limit").response(requestID: "r1")
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let json = try JSONSerialization.jsonObject(with: Data(response.bodyBytes!)) as! [String: Any]
        #expect(json["type"] as? String == "/problems/bad-request")
        #expect(json["title"] as? String == "Bad Request")
        #expect(json["status"] as? Int == 400)
        #expect(json["detail"] as? String == "limit must be 1-100")
        #expect(json["parameter"] as? String == "limit")
        #expect(json["instance"] as? String == "urn:request:r1")
    }

    @Test func rfc3339RoundTripsMicroseconds() {
        let date = Date(timeIntervalSince1970: 1_780_000_000.123456)
        let text = RFC3339.string(from: date)
        #expect(text == "2026-05-28T20:26:40.123456Z")
        let parsed = RFC3339.date(from: text)!
        #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
    }
}

@Suite(.timeLimit(.minutes(5))) struct RFC3339ParsingTests {
    @Test func keepsMicrosecondsAndOffsets() {
        #expect(RFC3339.date(from: "2026-01-02T03:04:05.123456Z").map(RFC3339.string(from:)) == "2026-01-02T03:04:05.123456Z")
        #expect(RFC3339.date(from: "2026-01-02T03:04:05Z").map(RFC3339.string(from:)) == "2026-01-02T03:04:05.000000Z")
        #expect(RFC3339.date(from: "2026-01-02T08:34:05.5+05:30").map(RFC3339.string(from:)) == "2026-01-02T03:04:05.500000Z")
        #expect(RFC3339.date(from: "2026-01-02T03:04:05-01:00").map(RFC3339.string(from:)) == "2026-01-02T04:04:05.000000Z")
    }

    @Test func rejectsMalformed() {
        for text in ["", "2026-01-02", "2026-13-02T03:04:05Z", "2026-01-02T03:04:05", "2026-01-02T03:04:05.Z",
                     "2026-01-02T03:04:05Zjunk", "yesterday"] {
            #expect(RFC3339.date(from: text) == nil, "\(text)")
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct LengthCheckTests {
    @Test func namesTheFieldAndTheBounds() {
        #expect(throws: Problem.badRequest("text must be 1 to 4,000 characters.", parameter: "text")) {
            try Problem.requireLength("", of: "text", in: 1 ... 4000)
        }
        #expect(throws: Problem.badRequest("body must be at most 20,000 characters.", parameter: "body")) {
            try Problem.requireLength(String(repeating: "x", count: 20_001), of: "body", in: 0 ... 20_000)
        }
        #expect(throws: Never.self) { try Problem.requireLength("ünï", of: "name", in: 1 ... 3) }
        #expect(Problem.grouped(1_234_567) == "1,234,567")
        #expect(Problem.grouped(200) == "200")
    }
}

/// Dates are RFC 3339 exactly: real calendar days, offsets within ±23:59.
@Suite(.timeLimit(.minutes(5))) struct RFC3339StrictnessTests {
    @Test(arguments: ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T10:00:00Z", "2024-01-01T00:00:00+25:00",
                      "2024-01-01T00:00:00+05:60", "2024-01-01T24:00:00Z", "2024-13-01T00:00:00Z", "0000-01-01T00:00:00Z",
                      "2024-01-01T00:00:60Z", "2024-02-30"])
    func refusesDatesThatDoNotExist(_ text: String) {
        #expect(RFC3339.date(from: text) == nil, "\(text)")
    }

    @Test(arguments: ["2024-02-29T12:00:00Z", "2000-02-29T00:00:00Z", "2024-12-31T23:59:59.999999+23:59",
                      "2024-06-30T00:00:00-12:00"])
    func acceptsRealDates(_ text: String) {
        #expect(RFC3339.date(from: text) != nil, "\(text)")
    }
}
