import Foundation
import Testing
import TestSupport
@testable import Webhooks

/// The record statement's input, written straight into bytes, is the JSON it means: per attempt, lower-case ids, whole
/// numbers, a null status when no answer came, the error's text escaped, and a fresh attempt id each.
@Suite("Webhook attempt records as the record statement reads them", .timeLimit(.minutes(1)))
struct RecordInputTests {
    @Test func eachRecordReadsBackAsWritten() throws {
        var random = SplitMix64(seed: 29)
        func uuid() -> UUID {
            let (high, low) = (random.next(), random.next())
            return withUnsafeBytes(of: (high, low)) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        let dispositions: [AttemptPlan.Disposition] = [.delivered, .pending(retryIn: 12.5), .failed]
        let records = (0 ..< 40).map { n in
            let answered = n % 3 != 0
            let message = ClaimedMessage(id: uuid(), endpointID: uuid(), interactionID: uuid(),
                                         eventSeq: Int64(random.next() % 1_000_000_000), eventType: "message.created",
                                         body: [], attempt: 1 + n % 7, url: "http://127.0.0.1/hook", secrets: [],
                                         createdAt: Date())
            let result = AttemptResult(outcome: answered ? .delivered : .networkError,
                                       status: answered ? 200 + n : nil, error: answered ? nil : "refused \"\(n)\"\\\n",
                                       retryAfterSeconds: nil, latency: .milliseconds(Int64(random.next() % 100_000)))
            return WebhookOutbox.AttemptRecord(result: result, message: message, token: uuid(),
                                               startedAt: Date(timeIntervalSince1970: 1_760_000_000.123456),
                                               disposition: dispositions[n % 3])
        }
        let input = WebhookOutbox.recordInput(records)
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(input)) as? [[String: Any]])
        #expect(objects.count == records.count)
        var attemptIDs = Set<String>()
        for (object, record) in zip(objects, records) {
            let (message, result) = (record.message, record.result)
            #expect(object["message_id"] as? String == message.id.uuidString.lowercased())
            #expect(object["endpoint_id"] as? String == message.endpointID.uuidString.lowercased())
            #expect(object["interaction_id"] as? String == message.interactionID.uuidString.lowercased())
            #expect(object["token"] as? String == record.token.uuidString.lowercased())
            #expect((object["event_seq"] as? NSNumber)?.int64Value == message.eventSeq)
            #expect((object["attempt"] as? NSNumber)?.intValue == message.attempt)
            #expect((object["response_status"] as? NSNumber)?.intValue == result.status)
            #expect(result.status != nil || object["response_status"] is NSNull)
            #expect((object["latency_ms"] as? NSNumber)?.int64Value == result.latency.wholeMilliseconds)
            #expect(object["error"] as? String == result.error)
            #expect(object["outcome"] as? String == result.outcome.rawValue)
            #expect(object["status"] as? String == record.disposition.status)
            #expect((object["retry_in"] as? NSNumber)?.doubleValue == record.disposition.retryIn ?? 0)
            #expect(object["attempted_at"] as? String == "2025-10-09T08:53:20.123456Z")
            let attemptID = try #require(object["attempt_id"] as? String)
            #expect(UUID(uuidString: attemptID) != nil && attemptID == attemptID.lowercased())
            attemptIDs.insert(attemptID)
        }
        #expect(attemptIDs.count == records.count)
    }
}
