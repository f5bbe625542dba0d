import Postgres
import Testing

/// The connect timeout comes from the caller, else from the connection string's `connect_timeout` (as libpq reads
/// it: seconds, at least 2, 0 meaning none given), else 5 s.
@Suite(.timeLimit(.minutes(5))) struct PostgresConfigurationTests {
    @Test func theConnectionStringsConnectTimeoutIsHonoured() {
        #expect(PostgresConfiguration(connectionString: "host=/tmp port=5432").connectTimeout == .seconds(5))
        #expect(PostgresConfiguration(connectionString: "host=/tmp port=5432 connect_timeout=30").connectTimeout == .seconds(30))
        #expect(PostgresConfiguration(connectionString: "postgres://u@h:5432/db?connect_timeout=12").connectTimeout == .seconds(12))
        #expect(PostgresConfiguration(connectionString: "host=/tmp connect_timeout=1").connectTimeout == .seconds(2))
        #expect(PostgresConfiguration(connectionString: "host=/tmp connect_timeout=0").connectTimeout == .seconds(5))
        #expect(PostgresConfiguration(connectionString: "host=/tmp connect_timeout=30", connectTimeout: .milliseconds(300))
            .connectTimeout == .milliseconds(300))
        #expect(PostgresConfiguration(connectionString: "not a valid = = string").connectTimeout == .seconds(5))
    }
}
