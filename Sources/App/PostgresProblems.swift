import HTTPServer
import Interactions
import Postgres

/// How database failures look at the HTTP edge: saturation and outages are 503, a session refused during its user's
/// erasure is 409, the rest stay 500s.
enum PostgresProblems {
    static func problem(for error: any Error) -> Problem? {
        guard let error = error as? PostgresError else { return nil }
        switch error.kind {
        case .poolTimeout:
            return Problem.serviceUnavailable("No database connection became free in time; retry shortly.")
        case .connection, .poolClosed:
            return Problem.serviceUnavailable("The database is unreachable; retry shortly.")
        case .deadline:
            return Problem.serviceUnavailable("The database did not answer in time; retry shortly.")
        case .server where error.sqlState == LifecycleMigrations.erasurePendingState:
            return Problem(status: 409, type: "/problems/erasure-pending", title: "Erasure Pending",
                           detail: "This user's data is being erased; no session can be opened until the erasure completes.")
        default:
            return nil
        }
    }
}
