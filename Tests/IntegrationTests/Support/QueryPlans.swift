import Foundation
import Postgres

/// The plan Postgres runs for `sql` prepared with parameter `types` and executed with `arguments`, under the
/// connection's current `plan_cache_mode` (set it to `force_generic_plan` to see the plan a prepared statement
/// settles on after five runs). The arguments are written as literals: EXPLAIN EXECUTE takes no bound parameters,
/// and they are the test's own values.
func queryPlan(of sql: String, types: String, arguments: [String], on connection: PostgresConnection) async throws -> String {
    _ = try await connection.query("PREPARE plan_probe (\(types)) AS \(sql)")
    let literals = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ", ")
    let rows = try await connection.query("EXPLAIN EXECUTE plan_probe (\(literals))")
    let lines = try rows.map { try $0.decode(#""QUERY PLAN""#, as: String.self) }
    _ = try await connection.query("DEALLOCATE plan_probe")
    return lines.joined(separator: "\n")
}
