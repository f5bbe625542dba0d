import HTTPServer

extension InboxEntry: JSONWritable {
    /// The entry's JSON as `JSON.encode` writes it: the interaction's fields with `in_view` and `last_message` among
    /// them, keys sorted.
    func write(to json: inout JSONBytes) {
        interaction.write(to: &json) { json in
            json.raw(#","in_view":"#)
            json.bool(inView)
            json.raw(#","last_message":"#)
            guard let lastMessage else {
                json.raw("null")
                return
            }
            json.raw(#"{"created_at":"#)
            json.timestamp(microsecondsSince1970: lastMessage.createdMicros)
            json.raw(#","id":"#)
            json.string(lastMessage.id)
            json.raw(#","kind":"#)
            json.string(lastMessage.kind)
            json.raw(#","sender_role":"#)
            json.string(lastMessage.senderRole)
            json.raw(#","text":"#)
            json.string(lastMessage.text)
            json.raw("}")
        }
    }
}
