/// A JSON request body whose fields are all known: `Request.decodeJSON` refuses a body carrying any other field
/// with a 400 naming it, so that a client's typo (`"titel"`) is an error rather than silently lost data.
///
/// Declare the body's `CodingKeys` as a `CaseIterable` enum listing every field it accepts, required or optional;
/// a field missing from the enum is refused even when the type would ignore it.
public protocol RequestBody: Decodable {
    /// Every field the body accepts.
    associatedtype CodingKeys: CodingKey & CaseIterable

    /// The body read from what the strict check already took out of it (its top-level strings and numbers), or nil
    /// to have it decoded as usual. A body of a few plain fields skips the second pass of `JSONDecoder` this way (4 %
    /// of a message POST's CPU in a profile); nil must be answered for anything it does not read exactly as the
    /// decoder would, so that every error keeps the decoder's words.
    static func decoded(from outline: StrictJSON.Outline) -> Self?
}

extension RequestBody {
    /// Every body is decoded by `JSONDecoder` unless it says otherwise.
    public static func decoded(from outline: StrictJSON.Outline) -> Self? { nil }

    /// The names of the fields the body accepts, in declaration order.
    static var fieldNames: [String] { CodingKeys.allCases.map { $0.stringValue } }

    /// The problem for `keys` (a body's top-level keys) when some are not fields of this body, else nil.
    static func unknownFieldsProblem(in keys: [String]) -> Problem? {
        // Asked of every body: checked key by key, with no list of names made unless one is unknown.
        guard let first = keys.first(where: { CodingKeys(stringValue: $0) == nil }) else { return nil }
        let known = fieldNames
        let unknown = keys.filter { !known.contains($0) }
        let named = unknown.map { "'\($0)'" }.joined(separator: ", ")
        let accepted = known.isEmpty ? "no fields" : "only " + known.joined(separator: ", ")
        let noun = unknown.count == 1 ? "field" : "fields"
        return Problem.badRequest("Unknown \(noun) \(named): this body takes \(accepted).", parameter: first)
    }
}
