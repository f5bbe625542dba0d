/// The rows a query returned, plus the number of rows its command affected.
///
/// Rows are read lazily from libpq's result, which stays in memory as long as this value or any of its rows lives.
/// Decode them where the query ran: rows are not `Sendable`, their decoded values are.
public struct PostgresRows: RandomAccessCollection {
    let result: PostgresResult

    init(_ result: PostgresResult) {
        self.result = result
    }

    /// The index of the first row, always 0.
    public var startIndex: Int { 0 }

    /// One past the last row.
    public var endIndex: Int { result.rowCount }

    /// The row at `position`.
    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < result.rowCount, "row \(position) out of range")
        return PostgresRow(result: result, index: Int32(position))
    }

    /// How many rows an `INSERT`, `UPDATE`, `DELETE`, `MERGE`, `SELECT` or `COPY` processed; 0 for other commands.
    ///
    /// For `INSERT … RETURNING` this equals `count`; for a plain `UPDATE` it is the only way to learn the count.
    public var affectedRows: Int { result.affectedRows }

    /// The command tag the server sent, e.g. `INSERT 0 1`.
    public var commandTag: String { result.commandTag }

    /// The result's column names, in order.
    public var columns: [String] {
        (0..<Int32(result.columnCount)).map(result.columnName)
    }
}
