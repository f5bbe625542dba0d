@testable import Postgres
import Testing

/// The target a log line names: host (or socket directory), port and database, as libpq would use them, and never
/// the password.
@Suite(.timeLimit(.minutes(5))) struct ConnectionTargetTests {
    private func target(_ connectionString: String, _ environment: [String: String] = [:]) -> String {
        PostgresConfiguration.target(of: connectionString) { environment[$0] }
    }

    @Test func keywordStringsAndURIsNameHostPortAndDatabase() {
        #expect(target("host=127.0.0.1 port=5433 dbname=x user=x password=hunter2 connect_timeout=1")
            == "host=127.0.0.1 port=5433 dbname=x")
        #expect(target("host=/tmp/devpg/cluster port=5433 user=postgres dbname=postgres")
            == "host=/tmp/devpg/cluster port=5433 dbname=postgres")
        #expect(target("postgres://alice:hunter2@db.example:6543/orders?sslmode=require")
            == "host=db.example port=6543 dbname=orders")
    }

    @Test func whatTheStringLeavesOutComesFromTheEnvironmentThenLibpqsDefaults() {
        #expect(target("user=alice") == "host=(default socket directory) port=5432 dbname=alice")
        #expect(target("", ["PGHOST": "/run/pg", "PGPORT": "6000", "PGDATABASE": "app"]) == "host=/run/pg port=6000 dbname=app")
        #expect(target("hostaddr=10.0.0.7", ["PGUSER": "bob"]) == "host=10.0.0.7 port=5432 dbname=bob")
        #expect(target("host=h port=1 dbname=d", ["PGHOST": "other", "PGPORT": "2", "PGDATABASE": "e"]) == "host=h port=1 dbname=d")
    }

    @Test func anUnparsableStringIsSaidToBeSo() {
        #expect(target("postgres://[bad") == "(unparsable connection string)")
    }
}
