/// The parameters a matched route template captured, e.g. `key` for `/v1/feeds/{key}`.
///
/// A template has a handful at most, so they are pairs found by comparing names: no hashing and no hash table for
/// every request that carries one.
public struct RouteParameters: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    private var pairs: [NameValue]

    /// No parameters.
    public init() { pairs = [] }

    /// The literal's pairs, e.g. `["key": "launch"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = []
        for (name, value) in elements { self[name] = value }
    }

    /// The value bound to `name`, or nil; setting one replaces any value of that name, and nil removes it.
    public subscript(name: String) -> String? {
        get {
            for pair in pairs where pair.name == name { return pair.value }
            return nil
        }
        set {
            if pairs.contains(where: { $0.name == name }) { pairs.removeAll { $0.name == name } }
            guard let newValue else { return }
            // Room for a template's usual few at once, not grown one by one.
            if pairs.isEmpty { pairs.reserveCapacity(4) }
            pairs.append(NameValue(name: name, value: newValue))
        }
    }

    /// How many names are bound.
    public var count: Int { pairs.count }

    /// The bound names and their values, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> {
        pairs.lazy.map { (name: $0.name, value: $0.value) }.makeIterator()
    }
}
