import HTTPServer

extension Interaction: JSONWritable {
    /// The interaction's JSON as `JSON.encode` writes it: keys sorted, absent optionals as null but for
    /// `agents_online`, which is left out.
    public func write(to json: inout JSONBytes) {
        write(to: &json, afterID: nil)
    }

    /// The interaction's JSON with `afterID` writing more fields (each with its leading comma) between `id` and
    /// `read_by_other_through`, where keys from `id` up to it sort (an inbox entry's `in_view` and `last_message`).
    func write(to json: inout JSONBytes, afterID: ((inout JSONBytes) -> Void)?) {
        if let agentsOnline {
            json.raw(#"{"agents_online":"#)
            json.integer(agentsOnline)
            json.raw(#","assigned_agent_id":"#)
        } else {
            json.raw(#"{"assigned_agent_id":"#)
        }
        json.stringOrNull(assignedAgentID)
        json.raw(#","created_at":"#)
        json.timestamp(createdAt)
        json.raw(#","customer_id":"#)
        json.string(customerID)
        json.raw(#","ended_at":"#)
        if let endedAt { json.timestamp(endedAt) } else { json.raw("null") }
        json.raw(#","failure_reason":"#)
        json.stringOrNull(failureReason)
        json.raw(#","id":"#)
        json.string(id)
        afterID?(&json)
        json.raw(#","read_by_other_through":"#)
        json.integer(readByOtherThrough)
        json.raw(#","state":"#)
        json.string(state.rawValue)
        json.raw(#","subject":"#)
        json.stringOrNull(subject)
        json.raw(#","unread_count":"#)
        json.integer(unreadCount)
        json.raw("}")
    }
}

extension ReadPosition: JSONWritable {
    /// `{"read_through":…,"unread_count":…}`.
    public func write(to json: inout JSONBytes) {
        json.raw(#"{"read_through":"#)
        json.integer(readThrough)
        json.raw(#","unread_count":"#)
        json.integer(unreadCount)
        json.raw("}")
    }
}

extension InteractionMessage: JSONWritable {
    /// The message's JSON as `JSON.encode` writes it: keys sorted, `attachments` and `redacted` left out when nil.
    public func write(to json: inout JSONBytes) {
        if let attachments {
            json.raw(#"{"attachments":"#)
            json.array(attachments)
            json.raw(#","created_at":"#)
        } else {
            json.raw(#"{"created_at":"#)
        }
        json.timestamp(createdAt)
        json.raw(#","id":"#)
        json.string(id)
        if let redacted {
            json.raw(#","redacted":"#)
            json.bool(redacted)
        }
        json.raw(#","sender_id":"#)
        json.string(senderID)
        json.raw(#","sender_role":"#)
        json.string(senderRole)
        json.raw(#","seq":"#)
        json.integer(seq)
        json.raw(#","text":"#)
        json.string(text)
        json.raw("}")
    }
}

extension Attachment: JSONWritable {
    /// The attachment's JSON as `JSON.encode` writes it: keys sorted, `filename`, `height` and `width` left out when
    /// nil.
    public func write(to json: inout JSONBytes) {
        json.raw(#"{"content_type":"#)
        json.string(contentType)
        json.raw(#","created_at":"#)
        json.timestamp(createdAt)
        if let filename {
            json.raw(#","filename":"#)
            json.string(filename)
        }
        if let height {
            json.raw(#","height":"#)
            json.integer(Int64(height))
        }
        json.raw(#","id":"#)
        json.string(id)
        json.raw(#","scan_state":"#)
        json.string(scanState)
        json.raw(#","sha256":"#)
        json.string(sha256)
        json.raw(#","size":"#)
        json.integer(size)
        if let width {
            json.raw(#","width":"#)
            json.integer(Int64(width))
        }
        json.raw("}")
    }
}
