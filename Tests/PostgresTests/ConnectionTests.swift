import Foundation
import Glibc
@testable import Postgres
import Testing
import TestSupport

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct ConnectionTests {
    @Test func sessionIsPredictable() async throws {
        try await TestDatabase.withConnection { connection throws in
            let row = try await connection.query(
                "SELECT current_setting('DateStyle') AS ds, current_setting('TimeZone') AS tz, "
                    + "current_setting('client_encoding') AS enc, current_setting('bytea_output') AS bytea")[0]
            #expect(try row.decode("ds", as: String.self).hasPrefix("ISO"))
            #expect(try row.decode("tz", as: String.self) == "UTC")
            #expect(try row.decode("enc", as: String.self) == "UTF8")
            #expect(try row.decode("bytea", as: String.self) == "hex")
            #expect(connection.backendPID > 0)
        }
    }

    @Test func acceptsURIConnectionStrings() async throws {
        let uri = Self.uri(from: TestDatabase.connectionString ?? "")
        let connection = try await PostgresConnection.connect(PostgresConfiguration(connectionString: uri))
        defer { connection.close() }
        let name = try await connection.query("SELECT current_setting('application_name') AS name")[0].decode("name", as: String.self)
        #expect(name == "uri-test")
    }

    /// A prepared statement is prepared once per connection and then run by name; when the schema changes its result
    /// shape, the next run (outside a transaction) prepares it afresh instead of failing.
    @Test func preparedStatementsSurviveASchemaChange() async throws {
        let table = TestDatabase.uniqueName("prepared")
        try await TestDatabase.withConnection { connection throws in
            try await connection.execute(script: "CREATE TEMP TABLE \(table) (id int); INSERT INTO \(table) VALUES (1), (2), (3);")
            let statement = PreparedStatement("SELECT * FROM \(table) WHERE id >= $1 ORDER BY id")
            for floor in [1, 2, 3, 1, 2, 3, 1] { // past the fifth run, when the server may switch to a generic plan
                let rows = try await connection.query(statement, [floor])
                #expect(try rows.map { try $0.decode("id", as: Int.self) } == Array(floor ... 3))
            }
            let names = try await connection.query("SELECT count(*)::int AS n FROM pg_prepared_statements")
            #expect(try names[0].decode("n", as: Int.self) == 1)
            try await connection.execute(script: "ALTER TABLE \(table) ADD COLUMN label text DEFAULT 'x'")
            let rows = try await connection.query(statement, [3])
            #expect(try rows[0].decode("label", as: String.self) == "x")
        }
    }

    /// Session settings join the user's own options and the decoders' fixed ones, which keep their values.
    @Test func sessionSettingsApplyToEverySessionOfTheConfiguration() async throws {
        var configuration = TestDatabase.configuration(searchPath: "settings_test")
        configuration.sessionSettings = ["synchronous_commit": "off", "lock_timeout": "7s"]
        let connection = try await PostgresConnection.connect(configuration)
        defer { connection.close() }
        let row = try await connection.query("""
            SELECT current_setting('synchronous_commit') AS commit, current_setting('lock_timeout') AS lock,
                   current_setting('search_path') AS path, current_setting('TimeZone') AS zone
            """)[0]
        #expect(try row.decode("commit", as: String.self) == "off")
        #expect(try row.decode("lock", as: String.self) == "7s")
        #expect(try row.decode("path", as: String.self) == "settings_test")
        #expect(try row.decode("zone", as: String.self) == "UTC")
    }

    @Test func scriptsRunSeveralStatements() async throws {
        let table = TestDatabase.uniqueName("script")
        try await TestDatabase.withConnection { connection throws in
            try await connection.execute(script: """
                CREATE TEMP TABLE \(table) (id int);
                INSERT INTO \(table) VALUES (1), (2);
                INSERT INTO \(table) VALUES (3);
                """)
            let rows = try await connection.query("UPDATE \(table) SET id = id + 10 WHERE id > $1 RETURNING id", [1])
            #expect(rows.affectedRows == 2)
            #expect(rows.count == 2)
            #expect(rows.columns == ["id"])
            await #expect { try await connection.execute(script: "SELECT 1; SELECT nope; SELECT 2") } throws: {
                ($0 as? PostgresError)?.sqlState == "42703"
            }
        }
    }

    @Test func closeIsIdempotentAndLaterQueriesFail() async throws {
        let connection = try await TestDatabase.connect()
        #expect(connection.isAlive())
        connection.close()
        connection.close()
        #expect(connection.isBroken)
        #expect(!connection.isAlive())
        await #expect { try await connection.query("SELECT 1") } throws: { ($0 as? PostgresError)?.kind == .connection }
    }

    @Test func terminatedBackendIsNoticedWithoutARoundTrip() async throws {
        let connection = try await TestDatabase.connect()
        defer { connection.close() }
        try await TestDatabase.withConnection { admin in
            _ = try await admin.query("SELECT pg_terminate_backend($1)", [connection.backendPID])
        }
        await waitUntil { !connection.isAlive() }
        #expect(connection.isBroken)
    }

    /// The backend sends its FATAL goodbye before its socket closes; a check in between must already fail.
    @Test func goodbyeBeforeTheSocketClosesIsNoticed() async throws {
        try await TestDatabase.withConnection { admin in
            for _ in 0..<20 {
                let connection = try await TestDatabase.connect()
                defer { connection.close() }
                _ = try await admin.query("SELECT pg_terminate_backend($1)", [connection.backendPID])
                await waitUntil {
                    var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
                    return poll(&descriptor, 1, 0) > 0
                }
                #expect(!connection.isAlive())
            }
        }
    }

    @Test func invalidConnectionStringsAndRefusedConnectionsThrow() async throws {
        let invalid = PostgresConfiguration(connectionString: "host=/tmp nonsense_key=1")
        await #expect { try await PostgresConnection.connect(invalid) } throws: { ($0 as? PostgresError)?.kind == .connection }
        let refused = PostgresConfiguration(connectionString: "host=127.0.0.1 port=1 user=nobody")
        await #expect { try await PostgresConnection.connect(refused) } throws: { ($0 as? PostgresError)?.kind == .connection }
    }

    @Test func connectTimesOutAgainstASilentServer() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let configuration = PostgresConfiguration(
            connectionString: "host=127.0.0.1 port=\(listener.port) user=nobody sslmode=disable",
            connectTimeout: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        await #expect { try await PostgresConnection.connect(configuration) } throws: {
            ($0 as? PostgresError)?.kind == .connection && "\($0)".contains("timed out")
        }
        #expect(clock.now - start < .seconds(4), "bounded by the connect timeout, not the server")
    }

    @Test func hostNamesAreResolvedBeforeLibpqSeesThem() async throws {
        let addresses = try await HostResolver.addresses(of: "localhost")
        #expect(addresses.contains("127.0.0.1"))
        await #expect { try await HostResolver.addresses(of: "no-such-host.invalid") } throws: {
            ($0 as? PostgresError)?.kind == .connection
        }
        let listener = try SilentListener()
        defer { listener.close() }
        let configuration = PostgresConfiguration(
            connectionString: "postgres://nobody@localhost:\(listener.port)/db?sslmode=disable",
            connectTimeout: .milliseconds(300))
        await #expect { try await PostgresConnection.connect(configuration) } throws: {
            "\($0)".contains("timed out")
        }
    }

    @Test func connectingCanBeCancelled() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let configuration = PostgresConfiguration(
            connectionString: "host=127.0.0.1 port=\(listener.port) user=nobody sslmode=disable",
            connectTimeout: .seconds(30))
        let attempt = Task { try await PostgresConnection.connect(configuration) }
        try await Task.sleep(for: .milliseconds(100))
        let clock = ContinuousClock()
        let start = clock.now
        attempt.cancel()
        await #expect(throws: CancellationError.self) { try await attempt.value }
        // Far below the 30 s connect timeout (loose enough for a loaded machine under ThreadSanitizer).
        #expect(clock.now - start < .seconds(5))
    }

    /// `key=value` → `postgres://user@host:port/db?application_name=uri-test` (a URI just gains the parameter).
    static func uri(from connectionString: String) -> String {
        if connectionString.contains("://") {
            return connectionString + (connectionString.contains("?") ? "&" : "?") + "application_name=uri-test"
        }
        var values: [String: String] = [:]
        for pair in connectionString.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        let host = values["host", default: "localhost"].addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        // The suite's connect timeout goes along (under ThreadSanitizer, connecting at the suite's start took > 5 s).
        let timeout = values["connect_timeout"].map { "&connect_timeout=\($0)" } ?? ""
        return "postgres://\(values["user", default: "postgres"])@\(host):\(values["port", default: "5432"])/"
            + "\(values["dbname", default: "postgres"])?application_name=uri-test\(timeout)"
    }
}
