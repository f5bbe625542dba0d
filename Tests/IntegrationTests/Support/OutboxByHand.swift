import Foundation
import Postgres
@testable import Webhooks

/// A running service with an endpoint at a receiver, whose delivery worker stays out of the way (its poll is ten
/// minutes off and nothing here notifies it), for tests that fill the outbox and run its statements by hand. The
/// test stops the app and, deferred, the receiver.
struct OutboxByHand {
    let receiver: WebhookReceiver
    let app: TestApp
    let scene: WebhookScene
    let endpointID: String

    static func start(path: String) async throws -> OutboxByHand {
        let receiver = try await WebhookReceiver.start()
        var settings = fastWebhooks
        settings.pollInterval = .seconds(600)
        let app = try await TestApp.start(webhooks: settings)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: path, receiver: receiver,
                                                            events: ["message.created"])
        return OutboxByHand(receiver: receiver, app: app, scene: scene, endpointID: endpoint["id"] as? String ?? "")
    }

    /// Adds `count` delivered messages, each in a queue of its own: the finished part of a running outbox.
    func addFinished(_ count: Int) async throws {
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body, status,
                                          finished_at)
            SELECT $1::uuid, $2::uuid, gen_random_uuid(), 1, 'message.created', '{}', 'delivered', now()
            FROM generate_series(1, $3::int)
            """, [endpointID, scene.tenantID, count])
    }

    /// Adds `queues` queues of `perQueue` pending messages each (event_seq 1, 2, …).
    func addPending(queues: Int, perQueue: Int) async throws {
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
            SELECT $1::uuid, $2::uuid, q.interaction, s, 'message.created', '{}'
            FROM (SELECT gen_random_uuid() AS interaction FROM generate_series(1, $3::int)) q, generate_series(1, $4::int) s
            """, [endpointID, scene.tenantID, queues, perQueue])
    }
}

/// Runs `sql` with `arguments` (SQL literals, comma-separated) under EXPLAIN (ANALYZE, BUFFERS) in a transaction it
/// rolls back; returns the plan's lines.
func analyzedPlan(of sql: String, types: String, arguments: String, on connection: PostgresConnection) async throws -> [String] {
    _ = try await connection.query("BEGIN")
    _ = try await connection.query("PREPARE analyzed_probe (\(types)) AS \(sql)")
    let rows = try await connection.query("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE analyzed_probe (\(arguments))")
    _ = try await connection.query("ROLLBACK")
    _ = try await connection.query("DEALLOCATE analyzed_probe")
    return try rows.map { try $0.decode(#""QUERY PLAN""#, as: String.self) }
}
