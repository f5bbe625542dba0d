import Foundation
import HTTPServer
import Interactions
import Postgres
import TestSupport
import Testing

/// Messages posted as one statement (text only, every third with an `Idempotency-Key` and retried at once on the
/// other replica) racing an interaction's end, through two replicas, seeded: every message answered 201 is in the
/// log exactly once, before the final state, and its answer is byte for byte the message as the list shows it; a
/// retry gets the first answer's very bytes (also after the end) and stores nothing; every 409 left nothing; ids run
/// 1, 2, 3… with no hole; the counters and the inbox preview agree with the log; and a customer posting to
/// another's interaction gets 404.
@Suite("Messages racing the end", .timeLimit(.minutes(5)))
struct MessageRaceTests {
    @Test(arguments: [7, 31] as [UInt64])
    func everyAnswerMatchesTheLog(seed: UInt64) async throws {
        let database = try await TestDatabase.create()
        let first = try await TestApp.start(database: database)
        let second = try await TestApp.start(database: database)
        let who = try await InteractionsEndToEndTests.people(first)
        var rng = SplitMix64(seed: seed)
        var rooms: [String] = []
        for _ in 0 ..< 3 { rooms.append(try await InteractionsEndToEndTests.start(first, who.alice)) }
        let endAfter = rooms.map { _ in Int(rng.next() % 12) }
        let posters = rooms.enumerated().flatMap { n, id in
            [(who.alice, "customer"), (who.agent, "agent")].map { token, role in
                Task { () -> [(text: String, status: Int, seq: Int?, body: [UInt8])] in
                    var answers: [(String, Int, Int?, [UInt8])] = []
                    for k in 0 ..< 15 {
                        let text = "\(role) \(n).\(k)"
                        let (app, other) = k.isMultiple(of: 2) ? (first, second) : (second, first)
                        let headers = k.isMultiple(of: 3) ? ["Idempotency-Key": "\(seed)-\(role)-\(n)-\(k)"] : [:]
                        let response = try await app.call("POST", "/v1/interactions/\(id)/messages", token: token,
                                                          headers: headers, body: #"{"text":"\#(text)"}"#)
                        answers.append((text, response.status, try? response.json()["seq"] as? Int, response.body))
                        guard !headers.isEmpty else { continue }
                        let retry = try await other.call("POST", "/v1/interactions/\(id)/messages", token: token,
                                                         headers: headers, body: #"{"text":"\#(text)"}"#)
                        if response.status == 201 {
                            #expect(retry.status == 201 && retry.body == response.body
                                    && retry.header("Idempotent-Replayed") == "true", "seed \(seed): retry of \(text)")
                        } else {
                            #expect(retry.status == response.status, "seed \(seed): retry of \(text): \(retry.status)")
                        }
                    }
                    return answers
                }
            }
        }
        for (n, id) in rooms.enumerated() {
            try await Task.sleep(for: .milliseconds(20 * endAfter[n]))
            #expect(try await second.call("POST", "/v1/interactions/\(id)/end", token: who.agent).status == 200)
        }
        var answers: [(text: String, status: Int, seq: Int?, body: [UInt8])] = []
        for poster in posters { answers += try await poster.value }

        // The race is real: some messages got in before an end, some came after one.
        #expect(answers.contains { $0.status == 201 } && answers.contains { $0.status == 409 }, "seed \(seed)")
        #expect(answers.allSatisfy { $0.status == 201 || $0.status == 409 }, "\(answers.filter { $0.status != 201 && $0.status != 409 })")
        for (n, id) in rooms.enumerated() {
            let log = try await database.query("""
                SELECT seq, kind, payload->>'text' AS text, payload->>'state' AS state FROM interaction_events
                WHERE interaction_id = $1::uuid ORDER BY seq
                """, [id])
            let seqs = try log.map { Int(try $0.decode("seq", as: Int64.self)) }
            #expect(seqs == Array(1 ... seqs.count), "seed \(seed): ids with a hole: \(seqs)")
            let final = try #require(try log.first { try $0.decode("state", as: String?.self) == "ended" }
                .map { Int(try $0.decode("seq", as: Int64.self)) })
            let stored = try Dictionary(log.compactMap { row -> (String, Int)? in
                guard let text = try row.decode("text", as: String?.self) else { return nil }
                return (text, Int(try row.decode("seq", as: Int64.self)))
            }, uniquingKeysWith: { _, _ in -1 })
            for answer in answers where answer.text.contains(" \(n).") {
                switch answer.status {
                case 201:
                    #expect(stored[answer.text] == answer.seq, "seed \(seed): \(answer.text) answered \(answer.seq ?? -1), stored \(stored[answer.text] ?? -1)")
                    #expect((answer.seq ?? .max) < final, "seed \(seed): \(answer.text) acknowledged after the end")
                default:
                    #expect(stored[answer.text] == nil, "seed \(seed): \(answer.text) refused but stored")
                }
            }
            // Each answer is the message as the list shows it, to the byte.
            let listed = try await first.call("GET", "/v1/interactions/\(id)/messages?limit=100", token: who.agent)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.body)) as? [String: Any])["items"]
            var compared = 0
            for item in try #require(items as? [[String: Any]]) {
                let message = try JSON.decode(InteractionMessage.self, from: Array(try JSONSerialization.data(withJSONObject: item)))
                guard let answer = answers.first(where: { $0.status == 201 && $0.seq == Int(message.seq) && $0.text == message.text })
                else { continue }
                #expect(answer.body == (try JSON.encode(message)), "seed \(seed): \(message.text)")
                compared += 1
            }
            #expect(compared == answers.filter { $0.status == 201 && $0.text.contains(" \(n).") }.count, "seed \(seed)")
            let counters = try await database.query("""
                SELECT customer_messages, agent_messages, inbox_preview->>'id' AS preview,
                       (SELECT count(*) FROM interaction_events e WHERE e.interaction_id = i.id AND e.kind = 'message'
                          AND e.payload->>'sender_role' = 'customer') AS customers,
                       (SELECT count(*) FROM interaction_events e WHERE e.interaction_id = i.id AND e.kind = 'message'
                          AND e.payload->>'sender_role' = 'agent') AS agents,
                       (SELECT e.payload->>'id' FROM interaction_events e WHERE e.interaction_id = i.id AND e.kind = 'message'
                        ORDER BY e.seq DESC LIMIT 1) AS last_message
                FROM interactions i WHERE i.id = $1::uuid
                """, [id])
            let row = try #require(counters.first)
            let (customerCounter, customers) = (try row.decode("customer_messages", as: Int64.self), try row.decode("customers", as: Int64.self))
            let (agentCounter, agents) = (try row.decode("agent_messages", as: Int64.self), try row.decode("agents", as: Int64.self))
            let (preview, lastMessage) = (try row.decode("preview", as: String?.self), try row.decode("last_message", as: String?.self))
            #expect(customerCounter == customers && agentCounter == agents, "seed \(seed)")
            #expect(preview == lastMessage, "seed \(seed)")
        }
        // Another customer's interaction is not found; a missing one neither.
        #expect(try await first.call("POST", "/v1/interactions/\(rooms[0])/messages", token: who.bob, body: #"{"text":"x"}"#).status == 404)
        #expect(try await first.call("POST", "/v1/interactions/\(UUID())/messages", token: who.agent, body: #"{"text":"x"}"#).status == 404)
        let refused = try await first.call("POST", "/v1/interactions/\(rooms[0])/messages", token: who.agent, body: #"{"text":"late"}"#)
        let refusedState = try refused.json()["state"] as? String
        #expect(refused.status == 409 && refusedState == "ended")
        await second.stopKeepingDatabase()
        await first.stop()
    }
}
