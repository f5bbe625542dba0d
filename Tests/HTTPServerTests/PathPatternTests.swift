import HTTPServer
import Testing

@Suite("Path patterns over raw request targets", .timeLimit(.minutes(5)))
struct PathPatternTests {
    let events = PathPattern("/v1/interactions/{id}/events")

    @Test func matchesTheTemplateWithAnyOneSegmentForAParameter() {
        #expect(events.matches(target: "/v1/interactions/abc/events"))
        #expect(events.matches(target: "/v1/interactions/0b9c-7e/events?after=12"))
        #expect(events.matches(target: "/v1/interactions/a%2Fb/events#x"))
        #expect(PathPattern("/stream/*").matches(target: "/stream/1"))
    }

    @Test func absoluteFormIsMatchedByItsPath() {
        #expect(events.matches(target: "http://example.com/v1/interactions/abc/events"))
        #expect(events.matches(target: "https://example.com:8443/v1/interactions/abc/events?x=1"))
        #expect(!events.matches(target: "http://example.com"))
        #expect(!events.matches(target: "http://v1/interactions/abc/events"))
    }

    @Test func nearMissesDoNotMatch() {
        for target in ["/v1/interactions//events", "/v1/interactions/abc/events/", "/v1/interactions/abc/event",
                       "/v1/interactions/abc", "/v1/interactions/abc/events/more", "//v1/interactions/abc/events",
                       "v1/interactions/abc/events", "/V1/interactions/abc/events", "*", "", "/",
                       "/v1/interactions/abc?/events", "/v1/feeds/abc/events"] {
            #expect(!events.matches(target: target), "\(target)")
        }
    }

    @Test func aQueryCannotMakeAPathMatch() {
        #expect(!events.matches(target: "/v1/feeds?next=/v1/interactions/abc/events"))
        #expect(!PathPattern("/api").matches(target: "/apix?/api"))
        #expect(PathPattern("/api").matches(target: "/api?/x/y"))
    }
}
