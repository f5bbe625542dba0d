import Foundation
import Postgres
import Testing
import TestSupport

/// The PostgreSQL server the integration tests run against, from `DATABASE_URL`.
enum TestDatabase {
    static let connectionString = ProcessInfo.processInfo.environment["DATABASE_URL"]

    /// Whether `DATABASE_URL` is set; suites that need a server are skipped otherwise.
    static var isAvailable: Bool { connectionString != nil }

    static var configuration: PostgresConfiguration {
        PostgresConfiguration(connectionString: connectionString ?? "")
    }

    /// The same server with `search_path` set to `schema`, written in whichever syntax `DATABASE_URL` uses.
    static func configuration(searchPath schema: String) -> PostgresConfiguration {
        let base = connectionString ?? ""
        let option = "-c search_path=\(schema)"
        guard base.contains("://") else {
            return PostgresConfiguration(connectionString: base + " options='\(option)'")
        }
        let encoded = option.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? option
        return PostgresConfiguration(connectionString: base + (base.contains("?") ? "&" : "?") + "options=" + encoded)
    }

    static func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration)
    }

    /// A lower-case identifier unique to this test run, e.g. `tx_3f2a…`.
    static func uniqueName(_ prefix: String) -> String {
        prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// Runs `body` on a fresh connection that is closed afterwards.
    static func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await connect()
        defer { connection.close() }
        return try await body(connection)
    }

    /// `SELECT count(*)` of `table`, read on a separate connection.
    static func count(_ table: String) async throws -> Int {
        try await withConnection { connection in
            try await connection.query("SELECT count(*) AS n FROM \(table)")[0].decode("n")
        }
    }
}

extension TestDatabase {
    /// Waits until backend `pid` is executing a statement containing `pg_sleep`, as seen from another connection.
    static func waitUntilSleeping(_ pid: Int32) async throws {
        try await withConnection { observer in
            try await waitUntil {
                try await observer.query(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE $2",
                    [pid, "%pg_sleep%"])[0].decode("n", as: Int.self) == 1
            }
        }
    }
}

/// A failure thrown on purpose by test bodies.
struct ExpectedFailure: Error {}
