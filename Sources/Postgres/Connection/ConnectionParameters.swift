import CLibPQ
import Glibc

/// The keyword/value pairs handed to `PQconnectStartParams`: the user's connection string plus session settings
/// that make text output predictable (UTF-8, ISO dates in UTC, hex `bytea`).
struct ConnectionParameters {
    private(set) var keywords: [String] = []
    private(set) var values: [String] = []

    /// Settings appended to the `options` keyword; the user's own options come first and are kept.
    static let sessionOptions = "-c datestyle=ISO -c timezone=UTC -c bytea_output=hex"

    /// Parses a `postgres://` URI or a `key=value` string with libpq's own parser; `settings` join the session
    /// options after the user's own.
    init(connectionString: String, settings: [String: String] = [:]) throws(PostgresError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            let reason = errorMessage.map { String(cString: $0) } ?? "out of memory"
            PQfreemem(errorMessage)
            throw PostgresError(.connection, "invalid connection string: \(reason)")
        }
        defer { PQconninfoFree(options) }
        var index = 0
        while let keyword = options[index].keyword {
            if let value = options[index].val { set(String(cString: keyword), String(cString: value)) }
            index += 1
        }
        // A peer that vanished without FIN or RST (a failover, a dropped NAT entry) is noticed in about a minute
        // instead of when the kernel gives up, hours later. Settings in the connection string win.
        for (keyword, value) in ConnectionParameters.tcpDefaults where self.value(of: keyword) == nil {
            set(keyword, value)
        }
        set("client_encoding", "UTF8")
        let userOptions = value(of: "options").map { $0 + " " } ?? ""
        let extra = settings.sorted { $0.key < $1.key }.map { " -c \($0.key)=\($0.value)" }.joined()
        set("options", userOptions + Self.sessionOptions + extra)
    }

    /// TCP liveness defaults (ignored by libpq on Unix-domain sockets).
    static let tcpDefaults = [("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"),
                              ("keepalives_count", "3"), ("tcp_user_timeout", "30000")]

    /// The value set for `keyword`, if any.
    func value(of keyword: String) -> String? {
        keywords.firstIndex(of: keyword).map { values[$0] }
    }

    /// Sets or replaces `keyword`.
    mutating func set(_ keyword: String, _ value: String) {
        if let index = keywords.firstIndex(of: keyword) {
            values[index] = value
        } else {
            keywords.append(keyword)
            values.append(value)
        }
    }

    /// Calls `body` with NULL-terminated C arrays of keywords and values, valid during the call only.
    func withCArrays<R>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> R
    ) -> R {
        let cKeywords = keywords.map { UnsafePointer(strdup($0)) } + [nil]
        let cValues = values.map { UnsafePointer(strdup($0)) } + [nil]
        defer {
            for pointer in cKeywords + cValues { free(UnsafeMutablePointer(mutating: pointer)) }
        }
        return body(cKeywords, cValues)
    }
}
