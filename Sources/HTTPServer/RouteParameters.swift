/// The parameters a matched route template captured, e.g. `key` for `/v1/feeds/{key}`.
///
/// A template has a handful at most, so they are pairs found by comparing names: no hashing and no hash table for
/// every request that carries one.
public struct RouteParameters: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The first pair, held inline: most templates capture one parameter, and an array for it was allocated, and then
    /// destroyed element by element through metadata, for every request that had one. Nil only when there are none.
    private var first: NameValue?
    /// The pairs after the first.
    private var rest: [NameValue] = []

    /// No parameters.
    public init() {}

    /// The literal's pairs, e.g. `["key": "launch"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The value bound to `name`, or nil; setting one replaces any value of that name, and nil removes it.
    public subscript(name: String) -> String? {
        get {
            guard let first else { return nil }
            if first.name == name { return first.value }
            for pair in rest where pair.name == name { return pair.value }
            return nil
        }
        set {
            remove(name)
            guard let newValue else { return }
            let pair = NameValue(name: name, value: newValue)
            if first == nil { first = pair } else { rest.append(pair) }
        }
    }

    /// Unbinds `name`, keeping the first pair inline whenever there is one.
    private mutating func remove(_ name: String) {
        if rest.contains(where: { $0.name == name }) { rest.removeAll { $0.name == name } }
        if first?.name == name { first = rest.isEmpty ? nil : rest.removeFirst() }
    }

    /// How many names are bound.
    public var count: Int { first == nil ? 0 : 1 + rest.count }

    /// The bound names and their values, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(name: String, value: String)> {
        ((first.map { [$0] } ?? []) + rest).lazy.map { (name: $0.name, value: $0.value) }.makeIterator()
    }
}
