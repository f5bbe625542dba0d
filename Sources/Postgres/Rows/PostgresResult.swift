import CLibPQ
import Glibc

/// Owns one `PGresult` and frees it when the last row referring to it is gone. Not `Sendable`: rows are decoded in
/// the task that ran the query (the pool's `withConnection` runs its body in the caller's isolation), and only the
/// decoded values travel.
@usableFromInline
final class PostgresResult {
    let pointer: OpaquePointer
    /// Number of rows in the result.
    let rowCount: Int
    /// Number of columns in the result.
    let columnCount: Int

    /// Takes ownership of `pointer`.
    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        self.rowCount = Int(PQntuples(pointer))
        self.columnCount = Int(PQnfields(pointer))
    }

    deinit {
        PQclear(pointer)
    }

    /// Rows inserted, updated, deleted, selected, … by the command, from its tag; 0 when the tag has no count.
    var affectedRows: Int {
        Int(String(cString: PQcmdTuples(pointer))) ?? 0
    }

    /// The command tag, e.g. `INSERT 0 1` or `SELECT 3`.
    var commandTag: String {
        String(cString: PQcmdStatus(pointer))
    }

    /// The names looked up so far and what each found, in the order of their first lookups, for a result of more
    /// than one row: its rows are decoded field by field in the same order row after row, so the entry after the
    /// last one used is nearly always the one wanted, and a name is compared with the columns' once per result, not
    /// once per row. (Only the task that ran the query decodes its rows: see the type's comment.)
    @exclusivity(unchecked) private var lookups: [(name: String, index: Int32?)] = []
    /// The entry of `lookups` to try first.
    @exclusivity(unchecked) private var nextLookup = 0

    /// The index of the column named `name` (libpq folds unquoted names to lower case), or `nil`; the first such
    /// column when several have the name, as `PQfnumber` answers.
    @usableFromInline
    func columnIndex(_ name: String) -> Int32? {
        guard rowCount > 1 else { return firstColumn(named: name) }
        if nextLookup < lookups.count, lookups[nextLookup].name == name {
            nextLookup += 1
            return lookups[nextLookup - 1].index
        }
        if let known = lookups.firstIndex(where: { $0.name == name }) {
            nextLookup = known + 1
            return lookups[known].index
        }
        let index = firstColumn(named: name)
        // Room for every column at once: growing one entry at a time cost four reallocations per result.
        if lookups.isEmpty { lookups.reserveCapacity(columnCount) }
        lookups.append((name, index))
        nextLookup = lookups.count
        return index
    }

    /// The first column named `name`, looked for among them all: for a name looked up once per result, with nothing
    /// remembered (``PostgresRows/column(_:)``).
    func firstColumn(named name: String) -> Int32? {
        var text = name
        let index = text.withUTF8 { wanted -> Int32 in
            // A plain lower-case name (what this service's code asks for) is compared with each column's as it is:
            // what `PQfnumber` ends up doing, after it copies the name with a malloc and folds its case, every time.
            guard wanted.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }) else {
                return PQfnumber(pointer, name)
            }
            for index in 0 ..< Int32(columnCount) {
                if let column = PQfname(pointer, index), strlen(column) == wanted.count,
                   wanted.isEmpty || memcmp(column, wanted.baseAddress!, wanted.count) == 0 {
                    return index
                }
            }
            return -1 // as `PQfnumber` says "none"
        }
        return index >= 0 ? index : nil
    }

    /// The name of column `index`.
    func columnName(_ index: Int32) -> String {
        String(cString: PQfname(pointer, index))
    }

    /// Calls `body` with the text bytes of one field, or with `nil` for SQL NULL.
    func withField<R, E: Error>(
        row: Int32, column: Int32, _ body: (UnsafeBufferPointer<UInt8>?) throws(E) -> R
    ) throws(E) -> R {
        try body(field(row: row, column: column))
    }

    /// The text bytes of one field, or `nil` for SQL NULL: valid while this result lives (libpq owns them). Not
    /// inlinable, so libpq is only called from this module even where the row decoder is inlined.
    @usableFromInline
    func field(row: Int32, column: Int32) -> UnsafeBufferPointer<UInt8>? {
        let length = Int(PQgetlength(pointer, row, column))
        // Only an empty field can be NULL (libpq gives NULL a length of 0): most fields need no third call.
        if length == 0 && PQgetisnull(pointer, row, column) != 0 { return nil }
        let start = UnsafeRawPointer(PQgetvalue(pointer, row, column)).map { $0.assumingMemoryBound(to: UInt8.self) }
        return UnsafeBufferPointer(start: start, count: length)
    }
}
