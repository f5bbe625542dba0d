import Accounts
import Coordination
import Foundation
import HTTPServer
import Postgres

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
            json.uuid(RandomUUID.make())
            json.raw(#","message_id":"#)
            json.uuid(message.id)
            json.raw(#","endpoint_id":"#)
            json.uuid(message.endpointID)
            json.raw(#","interaction_id":"#)
            json.uuid(message.interactionID)
            json.raw(#","event_seq":"#)
            json.integer(message.eventSeq)
            json.raw(#","attempt":"#)
            json.integer(Int64(message.attempt))
            json.raw(#","outcome":"#)
            json.string(result.outcome.rawValue)
            json.raw(#","response_status":"#)
            if let status = result.status { json.integer(Int64(status)) } else { json.raw("null") }
            json.raw(#","latency_ms":"#)
            json.integer(Int64(result.latency.wholeMilliseconds))
            json.raw(#","error":"#)
            json.stringOrNull(result.error)
            json.raw(#","attempted_at":"#)
            json.timestamp(microsecondsSince1970: Int64((record.startedAt.timeIntervalSince1970 * 1_000_000).rounded()))
            json.raw(#","token":"#)
            json.uuid(record.token)
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

extension JSONBytes {
    /// Appends `uuid`'s lower-case hyphenated form as a JSON string (it needs no escape).
    mutating func uuid(_ uuid: UUID) {
        UUIDText.withText(uuid) { quoted($0) }
    }
}
