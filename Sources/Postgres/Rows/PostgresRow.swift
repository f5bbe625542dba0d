/// One row of a query result; decode its fields by column name.
public struct PostgresRow {
    // `@usableFromInline`, with the decoders `@inlinable`: a caller in another module decodes each field with code
    // specialised for the field's type, not through generic metadata (rows are decoded field by field, per request).
    @usableFromInline let result: PostgresResult
    @usableFromInline let index: Int32

    /// Decodes the column named `column` as `T`.
    ///
    /// Names are matched as libpq's `PQfnumber` does: unquoted names are folded to lower case, so alias columns in
    /// lower case (`AS created_at`). NULL decodes only into an `Optional`; into any other type it throws a
    /// `.decoding` error naming the column, as does a missing column or unparsable text.
    @inlinable
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws(PostgresError) -> T {
        guard let columnIndex = result.columnIndex(column) else {
            throw PostgresError(.decoding, "no column named \"\(column)\" in the result", column: column)
        }
        return try decode(columnIndex, name: column, as: type)
    }

    /// Whether the named column is SQL NULL in this row; `false` when there is no such column.
    public func isNull(_ column: String) -> Bool {
        guard let columnIndex = result.columnIndex(column) else { return false }
        return result.withField(row: index, column: columnIndex) { $0 == nil }
    }

    @inlinable
    func decode<T: PostgresDecodable>(_ column: Int32, name: String, as type: T.Type) throws(PostgresError) -> T {
        // The bytes belong to `result`, which this row holds for the whole call.
        guard let text = result.field(row: index, column: column) else {
            guard let null = T.postgresNull else {
                throw PostgresError(.decoding, "column \"\(name)\" is NULL; decode it as \(T.self)?", column: name)
            }
            return null
        }
        do throws(PostgresError) {
            return try T(postgresText: text)
        } catch {
            var error = error
            error.column = name
            throw error
        }
    }
}
