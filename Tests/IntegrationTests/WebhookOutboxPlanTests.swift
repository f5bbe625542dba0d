import Foundation
import Postgres
import Testing
@testable import Webhooks

/// The delivery workers' statements must stay probes of an index however long the outbox grows: the attempt record
/// was once planned as a scan of the whole outbox (the planner cannot see how many attempts a batch holds, assumes
/// 100, and found a scan cheaper), so every delivery cost as much as the outbox was long.
@Suite("Webhook outbox plans", .serialized, .timeLimit(.minutes(10)))
struct WebhookOutboxPlanTests {
    @Test func theWorkersStatementsProbeTheOutboxByKeyHoweverLongItIs() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        // A poll that never comes: the worker stays out of the way while the outbox is filled by hand.
        var settings = fastWebhooks
        settings.pollInterval = .seconds(600)
        let app = try await TestApp.start(webhooks: settings)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/plans", receiver: receiver,
                                                            events: ["message.created"])
        let endpointID = endpoint["id"] as? String ?? ""
        let interaction = try await scene.openInteraction()
        // An outbox of some thousands of finished messages (the size at which the scan won), and one pending.
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body, status,
                                          finished_at)
            SELECT $1::uuid, $2::uuid, $3::uuid, 1000 + n, 'message.created', '{}',
                   CASE WHEN n = 5000 THEN 'pending' ELSE 'delivered' END, CASE WHEN n < 5000 THEN now() END
            FROM generate_series(1, 5000) AS n
            """, [endpointID, scene.tenantID, interaction])
        _ = try await app.database.query("ANALYZE webhook_messages")
        let pending = try await app.database.query(
            "SELECT id::text AS id FROM webhook_messages WHERE endpoint_id = $1::uuid AND status = 'pending'", [endpointID])
        let messageID = try pending[0].decode("id", as: String.self)
        let batch = """
            [{"message_id": "\(messageID)", "endpoint_id": "\(endpointID)", "attempt": 1, "outcome": "delivered",
              "response_status": 204, "latency_ms": 1, "attempted_at": "2026-01-01T00:00:00Z",
              "token": "\(UUID().uuidString)", "status": "delivered", "retry_in": 0,
              "interaction_id": "\(interaction)", "event_seq": 6000}]
            """

        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        try await pool.withConnection { connection in
            // The plan for these values, and the generic plan a prepared statement settles on after five runs.
            for mode in ["force_custom_plan", "force_generic_plan"] {
                _ = try await connection.query("SELECT set_config('plan_cache_mode', $1, false)", [mode])
                let record = try await queryPlan(of: WebhookOutbox.recordStatement.sql, types: "jsonb",
                                                 arguments: [batch], on: connection)
                #expect(!record.contains("Seq Scan"), "\(mode): the attempt record scans a table:\n\(record)")
                let claim = try await queryPlan(of: WebhookOutbox.claimStatement.sql, types: "int, bigint, uuid, uuid, uuid",
                                                arguments: ["16", "60000", UUID().uuidString, UUID().uuidString,
                                                            UUID().uuidString], on: connection)
                #expect(!claim.contains("Seq Scan on webhook_messages"), "\(mode): the claim scans the outbox:\n\(claim)")
            }
        }
        await pool.close()
        await app.stop()
    }
}
