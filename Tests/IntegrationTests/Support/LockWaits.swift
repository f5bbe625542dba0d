import Foundation
import TestSupport

extension TestApp {
    /// Whether, within `timeout`, a statement on this app's database whose text is like `pattern` (SQL `LIKE`) waits
    /// for a lock: for tests that hold a row in a transaction and must know the request they started is queued on it.
    /// Postgres keeps the first 1 KB of a statement's text here, so the pattern must match within it.
    func someStatementWaitsForALock(like pattern: String, timeout: Duration = .seconds(10)) async -> Bool {
        await eventually(timeout: timeout) {
            let waiting = try? await database.query("""
                SELECT count(*) AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1
                """, [pattern])
            return (try? waiting?.first?.decode("n", as: Int64.self)) ?? 0 > 0
        }
    }
}
