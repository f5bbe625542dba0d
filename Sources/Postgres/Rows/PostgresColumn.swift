/// A column of one result, looked up by name once (`PostgresRows.column(_:)`) and then read row after row without
/// a name lookup per field.
public struct PostgresColumn: Sendable, Hashable {
    @usableFromInline let index: Int32
    /// The column's name as the result gives it.
    public let name: String
}

extension PostgresRows {
    /// The column named `name` (matched as `PostgresRow.decode(_:as:)` matches names); throws a `.decoding` error
    /// naming it when the result has no such column.
    public func column(_ name: String) throws(PostgresError) -> PostgresColumn {
        // Resolved once for the whole result by its caller, so not remembered: a page's reads of seven names
        // paid more for the memo's growth and comparisons than the lookups cost.
        guard let index = result.firstColumn(named: name) else {
            throw PostgresError(.decoding, "no column named \"\(name)\" in the result", column: name)
        }
        return PostgresColumn(index: index, name: name)
    }
}

extension PostgresRow {
    /// Decodes `column` of this row as `T`, with the rules of `decode(_:as:)`.
    @inlinable
    public func decode<T: PostgresDecodable>(_ column: PostgresColumn, as type: T.Type = T.self) throws(PostgresError) -> T {
        try decode(column.index, name: column.name, as: type)
    }

    /// Calls `body` with the field's text bytes as the server sent them, or with `nil` for SQL NULL; the buffer is
    /// valid only during the call. For passing text through (escaping it into a response, say) without a copy.
    public func withText<R, E: Error>(_ column: PostgresColumn, _ body: (UnsafeBufferPointer<UInt8>?) throws(E) -> R) throws(E) -> R {
        try result.withField(row: index, column: column.index, body)
    }

    /// `withText(_:_:)` for a body that returns nothing and cannot throw: not generic, so a caller in another module
    /// pays no generic dispatch per field.
    public func withText(_ column: PostgresColumn, _ body: (UnsafeBufferPointer<UInt8>?) -> Void) {
        result.withField(row: index, column: column.index, body)
    }
}
