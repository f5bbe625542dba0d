import HTTPServer
import Interactions
import Postgres

/// How database failures look at the HTTP edge: saturation, outages and a write the database gave up to break a
/// deadlock or a serialization conflict (`40P01`, `40001`: nothing of it happened, a retry runs it afresh) are 503,
/// a session refused during its user's erasure is 409, the rest stay 500s.
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
        case .server where error.isTransient:
            // Two writes that take the same row and the same idempotency key in opposite orders (one request's key
            // sent with two different bodies at once) deadlock; Postgres cancels one of them.
            return Problem.serviceUnavailable("The write collided with a concurrent one and did not happen; retry it.")
        default:
            return nil
        }
    }
}
