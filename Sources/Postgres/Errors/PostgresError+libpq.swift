import CLibPQ

extension PostgresError {
    /// The error a failed result describes; `.server` when it carries a SQLSTATE, else `.connection`.
    init(result: OpaquePointer) {
        // The PG_DIAG_* macros are character literals, which Swift does not import.
        func field(_ code: Unicode.Scalar) -> String? {
            PQresultErrorField(result, Int32(code.value)).map { String(cString: $0) }
        }
        let sqlState = field("C")
        let message = field("M")
            ?? String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
        self.init(
            sqlState == nil ? .connection : .server, message.isEmpty ? "unknown error" : message,
            sqlState: sqlState, detail: field("D"), hint: field("H"), constraint: field("n"))
    }

    /// A `.connection` error carrying libpq's current message for `connection`, prefixed by `context`.
    init(connection: OpaquePointer, _ context: String) {
        let message = String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines()
        self.init(.connection, message.isEmpty ? context : "\(context): \(message)")
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline || last == " " { text.removeLast() }
        return String(text)
    }
}
