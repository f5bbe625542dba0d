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
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        var settings = fastWebhooks
        settings.pollInterval = .seconds(600) // the worker stays out of the way: the test claims by hand
        let app = try await TestApp.start(webhooks: settings)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/stale", receiver: receiver,
                                                            events: ["message.created"])
        let endpointID = endpoint["id"] as? String ?? ""
        // Statistics taken over a finished outbox, then a backlog they know nothing of.
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body, status,
                                          finished_at)
            SELECT $1::uuid, $2::uuid, gen_random_uuid(), 1, 'message.created', '{}', 'delivered', now()
            FROM generate_series(1, 5000)
            """, [endpointID, scene.tenantID])
        _ = try await app.database.query("ANALYZE webhook_messages")
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
            SELECT $1::uuid, $2::uuid, q.interaction, s, 'message.created', '{}'
            FROM (SELECT gen_random_uuid() AS interaction FROM generate_series(1, $3::int)) q, generate_series(1, $4::int) s
            """, [endpointID, scene.tenantID, Self.queues, Self.perQueue])

        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 2)
        let outbox = WebhookOutbox(pool: pool)
        let token = UUID()
        let claimed = try await outbox.claim(limit: Self.limit, lease: .seconds(60), token: token)
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
        await app.stop()
    }

    /// Runs `sql` with `arguments` (SQL literals) under EXPLAIN (ANALYZE, BUFFERS) in a transaction it rolls back;
    /// returns the buffers the whole statement touched, and the plan.
    static func buffersTouched(_ sql: String, types: String, arguments: String,
                               on connection: PostgresConnection) async throws -> (buffers: Int, plan: String) {
        _ = try await connection.query("BEGIN")
        _ = try await connection.query("PREPARE stale_probe (\(types)) AS \(sql)")
        let rows = try await connection.query("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE stale_probe (\(arguments))")
        _ = try await connection.query("ROLLBACK")
        _ = try await connection.query("DEALLOCATE stale_probe")
        let lines = try rows.map { try $0.decode(#""QUERY PLAN""#, as: String.self) }
        // The first Buffers line is the top node's: the whole statement's.
        let top = lines.first { $0.contains("Buffers: shared hit=") } ?? ""
        let hits = top.range(of: "hit=").map { Int(top[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        return (hits, lines.joined(separator: "\n"))
    }
}
