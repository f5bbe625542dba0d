/// A fixed statement that each connection prepares once (parsed and planned by the server on first use, then
/// executed by name), for hot statements whose planning costs more than their execution.
///
/// Use only for SQL fixed at compile time. If the schema changes under a prepared statement so that its result
/// shape differs ("cached plan must not change result type"), the connection forgets it, and the next use prepares
/// it afresh; outside a transaction the failed execution is retried once at once.
public struct PreparedStatement: Sendable, Hashable {
    /// The statement's text.
    public let sql: String
    /// A stable name prefix derived from the text (the connection adds a generation).
    let key: String

    /// A statement prepared on each connection the first time it runs there.
    public init(_ sql: String) {
        self.sql = sql
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        key = "sb_" + String(hash, radix: 36)
    }
}

/// The statements one connection has prepared, by key, under the names the server knows them by.
struct PreparedNames {
    private var names: [String: String] = [:]
    private var generation = 0

    /// The server-side name of `statement` if it is prepared on this connection.
    func name(of statement: PreparedStatement) -> String? { names[statement.key] }

    /// Picks a fresh name for `statement` (never one used before on this connection).
    mutating func newName(for statement: PreparedStatement) -> String {
        generation += 1
        return "\(statement.key)_\(generation)"
    }

    /// Records that `statement` is prepared as `name`.
    mutating func prepared(_ statement: PreparedStatement, as name: String) { names[statement.key] = name }

    /// Forgets `statement` (its plan was invalidated); the next use prepares it under a new name.
    mutating func forget(_ statement: PreparedStatement) { names[statement.key] = nil }
}
