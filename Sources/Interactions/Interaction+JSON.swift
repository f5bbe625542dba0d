import HTTPServer

extension Interaction: JSONWritable {
    /// The interaction's JSON as `JSON.encode` writes it: keys sorted, absent optionals as null but for
    /// `agents_online`, which is left out.
    public func write(to json: inout JSONBytes) {
        if let agentsOnline {
            json.raw(#"{"agents_online":"#)
            json.integer(agentsOnline)
            json.raw(#","assigned_agent_id":"#)
        } else {
            json.raw(#"{"assigned_agent_id":"#)
        }
        if let assignedAgentID { json.string(assignedAgentID) } else { json.raw("null") }
        json.raw(#","created_at":"#)
        json.timestamp(microsecondsSince1970: RFC3339.microseconds(of: createdAt))
        json.raw(#","customer_id":"#)
        json.string(customerID)
        json.raw(#","ended_at":"#)
        if let endedAt { json.timestamp(microsecondsSince1970: RFC3339.microseconds(of: endedAt)) } else { json.raw("null") }
        json.raw(#","failure_reason":"#)
        if let failureReason { json.string(failureReason) } else { json.raw("null") }
        json.raw(#","id":"#)
        json.string(id)
        json.raw(#","read_by_other_through":"#)
        json.integer(readByOtherThrough)
        json.raw(#","state":"#)
        json.string(state.rawValue)
        json.raw(#","subject":"#)
        if let subject { json.string(subject) } else { json.raw("null") }
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
