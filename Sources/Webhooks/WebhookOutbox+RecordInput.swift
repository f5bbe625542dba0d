import Accounts
import Coordination
import Foundation
import HTTPServer

extension WebhookOutbox {
    /// The batch as the record statement reads it (`jsonb_to_recordset`): one object per attempt, written straight
    /// into bytes (an encoder's generic walk was most of what recording cost this process). Each attempt gets its
    /// id here.
    static func recordInput(_ batch: [AttemptRecord]) -> [UInt8] {
        var json = JSONBytes(capacity: 64 + batch.count * 480)
        json.raw("[")
        for (index, record) in batch.enumerated() {
            if index > 0 { json.raw(",") }
            let (message, result) = (record.message, record.result)
            json.raw(#"{"attempt_id":"#)
            json.string(RandomUUID.make().lowercased)
            json.raw(#","message_id":"#)
            json.string(message.id.lowercased)
            json.raw(#","endpoint_id":"#)
            json.string(message.endpointID.lowercased)
            json.raw(#","interaction_id":"#)
            json.string(message.interactionID.lowercased)
            json.raw(#","event_seq":"#)
            json.raw(contentsOf: String(message.eventSeq))
            json.raw(#","attempt":"#)
            json.raw(contentsOf: String(message.attempt))
            json.raw(#","outcome":"#)
            json.string(result.outcome.rawValue)
            json.raw(#","response_status":"#)
            json.raw(contentsOf: result.status.map { String($0) } ?? "null")
            json.raw(#","latency_ms":"#)
            json.raw(contentsOf: String(result.latency.wholeMilliseconds))
            json.raw(#","error":"#)
            json.stringOrNull(result.error)
            json.raw(#","attempted_at":"#)
            json.timestamp(microsecondsSince1970: Int64((record.startedAt.timeIntervalSince1970 * 1_000_000).rounded()))
            json.raw(#","token":"#)
            json.string(record.token.lowercased)
            json.raw(#","status":"#)
            json.string(record.disposition.status)
            json.raw(#","retry_in":"#)
            json.raw(contentsOf: String(record.disposition.retryIn ?? 0))
            json.raw("}")
        }
        json.raw("]")
        return json.bytes
    }
}
