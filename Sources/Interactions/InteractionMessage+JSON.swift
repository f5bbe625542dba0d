import HTTPServer

extension InteractionMessage {
    /// How a new message's JSON begins; its time follows.
    static let answerHead = #"{"created_at":""#

    /// A text message's event payload, as ``InteractionStore/payloadJSON(_:)`` writes it for the same four fields (keys
    /// sorted, nil values as null), without a dictionary to sort: the keys' order is fixed.
    static func payload(id: String, senderID: String?, senderRole: String?, text: String) -> String {
        var json = JSONBytes(capacity: 64 + id.utf8.count + (senderID?.utf8.count ?? 4) + text.utf8.count)
        json.raw(#"{"id":"#)
        json.string(id)
        json.raw(#","sender_id":"#)
        if let senderID { json.string(senderID) } else { json.raw("null") }
        json.raw(#","sender_role":"#)
        if let senderRole { json.string(senderRole) } else { json.raw("null") }
        json.raw(#","text":"#)
        json.string(text)
        json.raw("}")
        return json.text
    }

    /// A new message's JSON (no files, not redacted; what `JSON.encode` writes for it, keys sorted) but for the two
    /// values only the database knows when it stores it: ``answerHead``, the time, `middle`, the `seq`, `tail`.
    /// Written straight into bytes, where the encoder's reflection over the type was a tenth of a POST's CPU.
    static func answerPieces(id: String, senderID: String, senderRole: String, text: String) -> (middle: String, tail: String) {
        var middle = JSONBytes(capacity: 64 + id.utf8.count + senderID.utf8.count)
        middle.raw(#"","id":"#)
        middle.string(id)
        middle.raw(#","sender_id":"#)
        middle.string(senderID)
        middle.raw(#","sender_role":"#)
        middle.string(senderRole)
        middle.raw(#","seq":"#)
        var tail = JSONBytes(capacity: 16 + text.utf8.count)
        tail.raw(#","text":"#)
        tail.string(text)
        tail.raw("}")
        return (middle.text, tail.text)
    }
}
