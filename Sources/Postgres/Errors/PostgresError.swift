/// A failure reported by the server, by libpq, by the pool, or while encoding or decoding a value.
///
/// Check ``kind`` first; ``sqlState`` is only set for errors the server reported (e.g. `23505`, `40001`).
/// A cancelled query surfaces as Swift's `CancellationError`, not as this type.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// Where a failure came from, which decides what a caller can do about it.
    public enum Kind: Sendable, Hashable {
        /// The server rejected the statement; ``sqlState`` says why. The connection stays usable.
        case server
        /// Connecting failed, timed out, or the connection broke; the connection is no longer usable.
        case connection
        /// The API was used in a way it does not support (two tasks on one connection, COPY, duplicate migrations).
        case misuse
        /// A parameter cannot be sent as PostgreSQL text (it contains a NUL byte).
        case encoding
        /// A result value could not be decoded into the requested Swift type, or the column does not exist.
        case decoding
        /// No pooled connection became free within the pool's acquire timeout.
        case poolTimeout
        /// A statement ran past its deadline and was cancelled (the connection stays usable); had the server not
        /// answered the cancel either, the error is `.connection` and the connection is discarded.
        case deadline
        /// The pool was closed before or while waiting for a connection.
        case poolClosed
    }

    /// Where the failure came from.
    public var kind: Kind
    /// The primary human-readable message.
    public var message: String
    /// The five-character SQLSTATE code for server errors, e.g. `23505` for a unique violation.
    public var sqlState: String?
    /// The server's optional secondary message (`DETAIL`).
    public var detail: String?
    /// The server's optional suggestion (`HINT`).
    public var hint: String?
    /// The name of the violated constraint, when the server names one.
    public var constraint: String?
    /// The result column a decoding error concerns.
    public var column: String?

    /// Creates an error; the optional fields default to absent.
    public init(
        _ kind: Kind, _ message: String, sqlState: String? = nil, detail: String? = nil, hint: String? = nil,
        constraint: String? = nil, column: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.column = column
    }

    /// Whether this is a unique-constraint violation (SQLSTATE `23505`).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// Whether the statement was cancelled by a cancel request or `statement_timeout` (SQLSTATE `57014`).
    public var isQueryCanceled: Bool { sqlState == "57014" }

    /// Whether a prepared statement can no longer run as prepared: the schema changed its result shape (`0A000`,
    /// "cached plan must not change result type") or the server no longer knows it (`26000`, after `DISCARD ALL`).
    var invalidatesPreparedStatement: Bool {
        sqlState == "26000" || (sqlState == "0A000" && message.contains("cached plan"))
    }

    /// Whether retrying the whole transaction may succeed (serialization failure or deadlock).
    public var isTransient: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// One line with the kind, SQLSTATE, message, and whatever context is present.
    public var description: String {
        var text = "PostgresError.\(kind)"
        if let sqlState { text += " [\(sqlState)]" }
        text += ": \(message)"
        if let column { text += " (column \"\(column)\")" }
        if let constraint { text += " (constraint \"\(constraint)\")" }
        if let detail { text += " DETAIL: \(detail)" }
        if let hint { text += " HINT: \(hint)" }
        return text
    }
}
