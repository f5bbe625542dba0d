import HTTPServer
@testable import Interactions
import Testing

/// What a stream request's `Last-Event-ID` (or `last_event_id`) says: a new stream only when there is none, never
/// when it is unusable — the answer from memory serves new streams alone, and an unusable id must get its 400.
@Suite(.timeLimit(.minutes(1))) struct StreamResumeIDTests {
    static func request(header: String? = nil, query: String? = nil) -> Request {
        var headers = HTTPHeaders()
        if let header { headers.add("Last-Event-ID", header) }
        return Request(method: "GET", path: "/v1/interactions/x/events",
                       query: query.map { [(name: "last_event_id", value: $0)] } ?? [], headers: headers)
    }

    @Test func onlyARequestWithoutAnIDStartsAfresh() throws {
        #expect(InteractionStreamRoute.startsAfresh(Self.request()))
        #expect(InteractionStreamRoute.startsAfresh(Self.request(header: "  ")))
        for usable in ["0", "7", " 12 ", "9223372036854775807"] {
            #expect(!InteractionStreamRoute.startsAfresh(Self.request(header: usable)), "\(usable)")
            #expect(!InteractionStreamRoute.startsAfresh(Self.request(query: usable)), "\(usable)")
        }
    }

    @Test(arguments: ["abc", "-1", "1.5", "0x10", "9223372036854775808", "1 2", "+", "١٢", "\u{0}"])
    func anUnusableIDNeitherStartsAfreshNorParses(_ garbage: String) {
        for request in [Self.request(header: garbage), Self.request(query: garbage)] {
            #expect(!InteractionStreamRoute.startsAfresh(request))
            #expect(throws: Problem.self) { try InteractionStreamRoute.lastEventID(request) }
        }
    }
}
