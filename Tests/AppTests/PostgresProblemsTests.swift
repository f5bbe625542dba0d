@testable import App
import HTTPServer
import Postgres
import Testing

/// Database failures at the HTTP edge: what a client may retry is 503 with `Retry-After`, what it may not is left to
/// the 500 path.
@Suite(.timeLimit(.minutes(1))) struct PostgresProblemsTests {
    @Test(arguments: ["40P01", "40001"])
    func aWriteTheDatabaseGaveUpIsRetryable(state: String) throws {
        let problem = try #require(PostgresProblems.problem(for: PostgresError(.server, "deadlock detected", sqlState: state)))
        #expect(problem.status == 503 && problem.headers["Retry-After"] == "1")
    }

    @Test func otherServerErrorsAreNotDressedUp() {
        #expect(PostgresProblems.problem(for: PostgresError(.server, "boom", sqlState: "XX000")) == nil)
        #expect(PostgresProblems.problem(for: PostgresError(.server, "duplicate", sqlState: "23505")) == nil)
    }

    @Test func outagesAreRetryable() throws {
        for kind in [PostgresError.Kind.poolTimeout, .connection, .poolClosed, .deadline] {
            #expect(try #require(PostgresProblems.problem(for: PostgresError(kind, "down"))).status == 503)
        }
    }
}
