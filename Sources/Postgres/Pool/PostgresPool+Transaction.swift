extension PostgresPool {
    /// Runs `body` inside `BEGIN … COMMIT` on one pooled connection.
    ///
    /// Rolls back when `body` throws or the task is cancelled (then throws `CancellationError`); the `ROLLBACK`
    /// and `COMMIT` themselves are never cancelled. A failed `COMMIT` (e.g. a serialization failure, SQLSTATE
    /// `40001`) throws: the transaction did not happen, and retrying the whole call is up to the caller.
    public func withTransaction<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            _ = try await connection.query("BEGIN")
            let value: T
            do {
                value = try await body(connection)
                try Task.checkCancellation()
            } catch {
                // If this fails too the connection is broken or still in the transaction; release closes it.
                _ = try? await connection.query("ROLLBACK", cancellable: false)
                throw error
            }
            _ = try await connection.query("COMMIT", cancellable: false)
            return value
        }
    }
}
