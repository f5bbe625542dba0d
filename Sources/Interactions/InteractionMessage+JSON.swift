import HTTPServer

extension InteractionMessage {
    /// How a new message's JSON begins; its time follows.
    static let answerHead = #"{"created_at":""#

    /// What a text message's statement takes: its event payload, as ``InteractionStore/payloadJSON(_:)`` writes it
    /// for the same four fields (keys sorted, nil values as null), and the new message's JSON (no files, not redacted;
    /// what `JSON.encode` writes for it, keys sorted) but for the two values only the database knows when it stores
    /// it: ``answerHead``, the time, `middle`, the `seq`, `tail`.
    ///
    /// Written straight into bytes (the encoder's reflection over the type was a tenth of a POST's CPU; a dictionary
    /// sorted for the payload, another share), the text escaped once: `tail` is the payload's last field and its
    /// closing brace. A nil sender is null in the payload and empty in the answer.
    static func statementPieces(id: String, senderID: String?, senderRole: String?,
                                text: String) -> (payload: String, middle: String, tail: String) {
        var payload = JSONBytes(capacity: 64 + id.utf8.count + (senderID?.utf8.count ?? 4) + text.utf8.count)
        payload.raw(#"{"id":"#)
        payload.string(id)
        payload.raw(#","sender_id":"#)
        payload.stringOrNull(senderID)
        payload.raw(#","sender_role":"#)
        payload.stringOrNull(senderRole)
        let tailStart = payload.byteCount
        payload.raw(#","text":"#)
        payload.string(text)
        payload.raw("}")
        var middle = JSONBytes(capacity: 64 + id.utf8.count + (senderID?.utf8.count ?? 0))
        middle.raw(#"","id":"#)
        middle.string(id)
        middle.raw(#","sender_id":"#)
        middle.string(senderID ?? "")
        middle.raw(#","sender_role":"#)
        middle.string(senderRole ?? "")
        middle.raw(#","seq":"#)
        return (payload.text, middle.text, payload.text(from: tailStart))
    }
}
