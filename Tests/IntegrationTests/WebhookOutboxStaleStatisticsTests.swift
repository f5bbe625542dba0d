import Foundation
import Postgres
import Testing
@testable import Webhooks

/// A queue table's statistics are usually wrong: taken while nothing was pending, they make the pending index look
/// empty, and a statement the planner may turn into a scan of it then reads every pending message once per message
/// it handles. The claim and the record must stay probes in that state, with the plan made for the values and with
/// the generic plan a prepared statement settles on: each is run under EXPLAIN ANALYZE and its buffers are counted.
@Suite("Webhook outbox under stale statistics", .serialized, .timeLimit(.minutes(10)))
struct WebhookOutboxStaleStatisticsTests {
    static let queues = 300, perQueue = 10, limit = 7
    /// Buffers one claim or record of `limit` messages may touch. The probes touch some hundreds; a scan of the
    /// pending index per message, tens of thousands.
    static let bufferBound = 2_000

    @Test func theClaimAndTheRecordStayProbesWhenTheStatisticsSayNothingIsPending() async throws {
        let outbox = try await OutboxByHand.start(path: "/stale")
        defer { outbox.receiver.stop() }
        // Statistics taken over a finished outbox, then a backlog they know nothing of.
        try await outbox.addFinished(5000)
        _ = try await outbox.app.database.query("ANALYZE webhook_messages")
        try await outbox.addPending(queues: Self.queues, perQueue: Self.perQueue)

        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: outbox.app.database.url), maxConnections: 2)
        let token = UUID()
        let claimed = try await WebhookOutbox(pool: pool).claim(limit: Self.limit, lease: .seconds(60), token: token)
        #expect(claimed.count == Self.limit)
        let records = claimed.map { message in
            WebhookOutbox.AttemptRecord(
                result: AttemptResult(outcome: .delivered, status: 204, error: nil, retryAfterSeconds: nil, latency: .milliseconds(1)),
                message: message, token: token, startedAt: Date(), disposition: .delivered)
        }
        let batch = String(decoding: WebhookOutbox.recordInput(records), as: UTF8.self)
        let zero = "00000000-0000-0000-0000-000000000000"
        try await pool.withConnection { connection in
            for mode in ["force_custom_plan", "force_generic_plan"] {
                _ = try await connection.query("SELECT set_config('plan_cache_mode', $1, false)", [mode])
                let claim = try await Self.buffersTouched(
                    WebhookOutbox.claimStatement.sql, types: "int, bigint, uuid, uuid, uuid",
                    arguments: "\(Self.limit), 60000, '\(UUID().uuidString)', '\(zero)', '\(zero)'", on: connection)
                #expect(claim.buffers < Self.bufferBound, "\(mode): a claim touched \(claim.buffers) buffers:\n\(claim.plan)")
                let record = try await Self.buffersTouched(
                    WebhookOutbox.recordStatement.sql, types: "jsonb",
                    arguments: "'" + batch.replacingOccurrences(of: "'", with: "''") + "'", on: connection)
                #expect(record.buffers < Self.bufferBound, "\(mode): a record touched \(record.buffers) buffers:\n\(record.plan)")
                #expect(record.plan.contains("rows=\(Self.limit)"), "the record moved nothing:\n\(record.plan)")
            }
        }
        await pool.close()
        await outbox.app.stop()
    }

    /// Runs `sql` under EXPLAIN ANALYZE (see ``analyzedPlan(of:types:arguments:on:)``); returns the buffers the whole
    /// statement touched, and the plan.
    static func buffersTouched(_ sql: String, types: String, arguments: String,
                               on connection: PostgresConnection) async throws -> (buffers: Int, plan: String) {
        let lines = try await analyzedPlan(of: sql, types: types, arguments: arguments, on: connection)
        // The first Buffers line is the top node's: the whole statement's.
        let top = lines.first { $0.contains("Buffers: shared hit=") } ?? ""
        let hits = top.range(of: "hit=").map { Int(top[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        return (hits, lines.joined(separator: "\n"))
    }
}
