/// A value that writes its own JSON into ``JSONBytes``: the very bytes `JSON.encode` writes for it (keys sorted,
/// optionals as its `Encodable` conformance has them), without the encoder's walk over the value through its coding
/// containers, which costs a small answer more than everything else its route does outside the database.
public protocol JSONWritable: Encodable {
    /// Appends the value's JSON to `json`.
    func write(to json: inout JSONBytes)
}

extension JSONWritable {
    /// The value's JSON, as `JSON.encode` writes it.
    public func jsonBytes(capacity: Int = 256) -> [UInt8] {
        var json = JSONBytes(capacity: capacity)
        write(to: &json)
        return json.bytes
    }
}

extension Response {
    /// A JSON response of a value that writes its own JSON (the same bytes as the `Encodable` form's).
    public static func json<T: JSONWritable>(_ value: T, status: Int = 200, headers: HTTPHeaders = [:]) -> Response {
        json(encoded: value.jsonBytes(), status: status, headers: headers)
    }
}

extension PageBody: JSONWritable where Item: JSONWritable {
    /// `{"has_more":…,"items":[…],"next_cursor":…}`, each item as it writes itself.
    public func write(to json: inout JSONBytes) {
        json.raw(#"{"has_more":"#)
        json.bool(hasMore)
        json.raw(#","items":"#)
        json.array(items)
        json.raw(#","next_cursor":"#)
        json.stringOrNull(nextCursor)
        json.raw("}")
    }
}

extension JSONBytes {
    /// Appends `items` as a JSON array, each as it writes itself.
    public mutating func array<Items: Sequence>(_ items: Items) where Items.Element: JSONWritable {
        raw("[")
        for (index, item) in items.enumerated() {
            if index > 0 { raw(",") }
            item.write(to: &self)
        }
        raw("]")
    }
}
