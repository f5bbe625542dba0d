import Foundation
import Testing

@Suite("Metrics", .timeLimit(.minutes(10)))
struct MetricsTests {
    /// The value of the sample whose line starts with `prefix` (name and labels), or nil.
    static func sample(_ text: String, _ prefix: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(prefix + " ") {
            return Double(line.dropFirst(prefix.count + 1))
        }
        return nil
    }

    @Test func prometheusTextWithRouteTemplatesAndComponentGauges() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        for _ in 0 ..< 3 { _ = try await app.call("GET", "/v1/interactions/\(id)", token: who.alice) }
        _ = try await app.call("GET", "/v1/interactions/\(UUID())", token: who.alice)
        _ = try await app.call("POST", "/v1/feeds/news/items", token: who.apiKey, body: #"{"title":"x"}"#)
        for _ in 0 ..< 2 { _ = try await app.call("GET", "/v1/feeds/news", token: who.alice) }
        let follower = try await InteractionStreamTests.follow(app, id, who.alice)
        _ = try await onThread { try follower.events(1) }

        let response = try await app.metrics()
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = response.text
        let route = #"route="/v1/interactions/{id}",method="GET""#
        #expect(Self.sample(text, "switchboard_http_requests_total{\(route),status=\"200\"}") == 3)
        #expect(Self.sample(text, "switchboard_http_requests_total{\(route),status=\"404\"}") == 1)
        #expect(Self.sample(text, "switchboard_http_request_duration_seconds_count{\(route)}") == 4)
        #expect(Self.sample(text, "switchboard_http_request_duration_seconds_bucket{\(route),le=\"+Inf\"}") == 4)
        #expect(!text.contains(id), "raw paths must not become labels")
        #expect(Self.sample(text, "switchboard_sse_subscribers") == 1)
        #expect(Self.sample(text, "switchboard_http_requests_in_flight") != nil)
        #expect(Self.sample(text, #"switchboard_coordinator_loads_total{coordinator="feeds"}"#) == 1)
        #expect((Self.sample(text, #"switchboard_coordinator_cache_hits_total{coordinator="feeds"}"#) ?? 0) >= 1)
        #expect((Self.sample(text, #"switchboard_coordinator_cache_hits_total{coordinator="tokens"}"#) ?? 0) >= 1)
        #expect((Self.sample(text, #"switchboard_db_pool_connections{state="open"}"#) ?? 0) >= 1)
        #expect(Self.sample(text, "switchboard_db_pool_waiters") == 0)
        #expect((Self.sample(text, "switchboard_db_query_duration_seconds_count") ?? 0) > 5)
        #expect(text.contains(#"switchboard_build_info{version=""#))
        // Every sample line belongs to a declared metric.
        let declared = Set(text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] })
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let name = line.split(whereSeparator: { $0 == "{" || $0 == " " })[0]
            let base = ["_bucket", "_sum", "_count"].reduce(String(name)) { name, suffix in
                name.hasSuffix(suffix) && declared.contains(Substring(name.dropLast(suffix.count))) ? String(name.dropLast(suffix.count)) : name
            }
            #expect(declared.contains(Substring(base)), "\(line)")
        }
        follower.socket.shutdownAndClose()
        await app.stop()
    }
}
