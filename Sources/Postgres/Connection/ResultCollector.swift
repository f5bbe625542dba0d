import CLibPQ

/// Gathers the results of one query until libpq reports the end: keeps the last successful result, or the first
/// error (after which the server skips the rest of a multi-statement script).
struct ResultCollector {
    private var last: PostgresResult?
    /// The first error, boxed as it will be thrown: the collector lives in every query's async frame, and an unboxed
    /// ``PostgresError`` (seven fields) would take a hundred bytes of it.
    private var firstError: (any Error)?

    /// Takes ownership of one `PGresult`. Throws only when the connection cannot continue (COPY).
    mutating func add(_ pointer: OpaquePointer) throws(PostgresError) {
        let result = PostgresResult(pointer)
        switch PQresultStatus(pointer) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            if firstError == nil { last = result }
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            throw PostgresError(.misuse, "COPY is not supported; the connection was closed")
        default:
            if firstError == nil { firstError = PostgresError(result: pointer) }
        }
    }

    /// The outcome once `PQgetResult` returned NULL.
    func outcome() -> Result<PostgresResult, any Error> {
        if let firstError { return .failure(firstError) }
        guard let last else { return .failure(PostgresError(.connection, "the server sent no result")) }
        return .success(last)
    }
}
