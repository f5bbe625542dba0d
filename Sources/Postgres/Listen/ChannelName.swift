/// The channel names `LISTEN` accepts from this module: lower-case identifiers, `[a-z_][a-z0-9_]*`, up to 63 bytes.
///
/// `LISTEN` takes no bound parameters, so the name is spliced into SQL; this validation is what keeps that safe.
/// Restricting to lower case also makes `LISTEN "name"` and `pg_notify('name', …)` agree on the channel.
enum ChannelName {
    /// PostgreSQL's identifier limit (`NAMEDATALEN - 1`); longer names are silently truncated by the server.
    static let maxLength = 63

    /// Throws a `.misuse` error unless `name` is a valid channel name.
    static func validate(_ name: String) throws(PostgresError) {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maxLength, isStart(first), bytes.allSatisfy(isPart) else {
            throw PostgresError(
                .misuse, "invalid channel name \"\(name)\": use [a-z_][a-z0-9_]*, at most \(maxLength) characters")
        }
    }

    /// `name` as a quoted SQL identifier, so reserved words (`user`, `select`) work too.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func isStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: "_")
    }

    private static func isPart(_ byte: UInt8) -> Bool {
        isStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
