extension Request {
    /// An integer query parameter within `range`, or `defaultValue` when absent; anything else is a 400 naming it.
    public func integerQuery(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = queryValue(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw Problem.badRequest("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound).",
                                     parameter: name)
        }
        return value
    }

    /// A non-empty query parameter parsed by `parse`, or nil when absent; unparsable is a 400 naming it.
    /// Inlinable, so that it is specialized where it is called: generic, it looked up `Optional<T>`'s metadata at run
    /// time on every call, the hot feed's included.
    @inlinable
    public func parsedQuery<T>(_ name: String, _ parse: (String) -> T?) throws -> T? {
        guard let text = queryValue(name), !text.isEmpty else { return nil }
        guard let value = parse(text) else {
            throw Problem.badRequest("\(name) is not a \(name) this API returned.", parameter: name)
        }
        return value
    }
}
