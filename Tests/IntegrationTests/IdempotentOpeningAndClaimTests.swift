import Foundation
import TestSupport
import Testing

/// Opening an interaction and claiming it are one statement each; with an `Idempotency-Key` that statement runs in
/// the transaction that records its answer, so a retry (even concurrent ones) changes nothing and gets the first
/// answer back.
@Suite("Idempotency-Key on opening and claiming", .timeLimit(.minutes(5)))
struct IdempotentOpeningAndClaimTests {
    @Test func retriesOpenOneInteraction() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let racing = try await withThrowingTaskGroup(of: RawResponse.self) { group in
            for _ in 0 ..< 8 {
                group.addTask {
                    try await app.call("POST", "/v1/interactions", token: who.alice, headers: ["Idempotency-Key": "open-1"],
                                       body: #"{"subject":"Card blocked"}"#)
                }
            }
            return try await group.reduce(into: [RawResponse]()) { $0.append($1) }
        }
        #expect(racing.allSatisfy { $0.status == 201 })
        #expect(Set(racing.map(\.body)).count == 1, "every retry gets the first answer")
        #expect(racing.filter { $0.header("Idempotent-Replayed") == "true" }.count == 7)
        #expect(try await AuditTrailTests.count(app, "SELECT count(*) AS n FROM interactions") == 1)
        #expect(try await AuditTrailTests.count(
            app, "SELECT count(*) AS n FROM interaction_events WHERE kind = 'state'") == 1)
        let other = try await app.call("POST", "/v1/interactions", token: who.alice, headers: ["Idempotency-Key": "open-1"],
                                       body: #"{"subject":"Another"}"#)
        #expect(other.status == 422 && other.header("Content-Type") == "application/problem+json")
        #expect(try await AuditTrailTests.count(app, "SELECT count(*) AS n FROM interactions") == 1)
        await app.stop()
    }

    @Test func retriesClaimOnce() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let racing = try await withThrowingTaskGroup(of: RawResponse.self) { group in
            for _ in 0 ..< 8 {
                group.addTask {
                    try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent,
                                       headers: ["Idempotency-Key": "claim-1"])
                }
            }
            return try await group.reduce(into: [RawResponse]()) { $0.append($1) }
        }
        #expect(racing.allSatisfy { $0.status == 200 })
        #expect(Set(racing.map(\.body)).count == 1)
        #expect(try racing[0].json()["assigned_agent_id"] as? String == "agent-7")
        #expect(try await AuditTrailTests.count(
            app, "SELECT count(*) AS n FROM interaction_events WHERE kind = 'assignment'") == 1)
        #expect(try await AuditTrailTests.count(
            app, "SELECT count(*) AS n FROM audit_events WHERE action = 'interaction.claimed'") == 1)
        // A refused claim under a key is not recorded: once the interaction is free, the same key claims it.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.apiKey,
                                   body: #"{"agent_id":"agent-rival"}"#).status == 200)
        let refused = try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent,
                                         headers: ["Idempotency-Key": "claim-2"])
        #expect(refused.status == 409)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/assign", token: who.apiKey,
                                   body: #"{"agent_id":null}"#).status == 200)
        let again = try await app.call("POST", "/v1/interactions/\(id)/claim", token: who.agent,
                                       headers: ["Idempotency-Key": "claim-2"])
        #expect(again.status == 200 && again.header("Idempotent-Replayed") == nil)
        #expect(try await AuditTrailTests.count(
            app, "SELECT count(*) AS n FROM audit_events WHERE action = 'interaction.claimed'") == 2)
        await app.stop()
    }
}
