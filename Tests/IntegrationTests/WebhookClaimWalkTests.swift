import Foundation
import Postgres
import Testing
@testable import Webhooks

/// A claim walks the queues only until it has its messages, and successive claims take every queue in turn: the
/// walk over every queue with something pending was most of what a delivery cost Postgres.
@Suite("Webhook claims walk the queues in turn", .serialized, .timeLimit(.minutes(10)))
struct WebhookClaimWalkTests {
    static let queues = 300

    @Test func aClaimProbesAboutAsManyQueuesAsItTakesAndClaimsTakeEveryQueueInTurn() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        var settings = fastWebhooks
        settings.pollInterval = .seconds(600) // the worker stays out of the way: the test claims by hand
        let app = try await TestApp.start(webhooks: settings)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/walk", receiver: receiver,
                                                            events: ["message.created"])
        let endpointID = endpoint["id"] as? String ?? ""
        // 300 queues with two pending messages each: only the first of each heads its queue.
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
            SELECT $1::uuid, $2::uuid, q.interaction, s, 'message.created', '{}'
            FROM (SELECT gen_random_uuid() AS interaction FROM generate_series(1, $3::int)) q, generate_series(1, 2) s
            """, [endpointID, scene.tenantID, Self.queues])
        // And an outbox of some thousands of finished messages, as a running one has (at this size a scan would win).
        _ = try await app.database.query("""
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body, status,
                                          finished_at)
            SELECT $1::uuid, $2::uuid, gen_random_uuid(), 1, 'message.created', '{}', 'delivered', now()
            FROM generate_series(1, 5000)
            """, [endpointID, scene.tenantID])
        _ = try await app.database.query("ANALYZE webhook_messages")

        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let outbox = WebhookOutbox(pool: pool)
        let limit = 7

        // One claim, run and rolled back under EXPLAIN ANALYZE: how many queues its walk probed.
        let probes = try await pool.withConnection { connection in
            try await Self.queuesProbed(limit: limit, on: connection)
        }
        // The walk's first queue is found by the scan that starts it; each further one is a loop of its next step.
        #expect(probes >= limit - 1 && probes <= limit + 2, "a claim of \(limit) probed \(probes + 1) of \(Self.queues) queues")

        var pivot = QueueKey.first
        var taken: [QueueKey] = []
        for _ in 0 ..< (Self.queues + limit - 1) / limit {
            let claimed = try await outbox.claim(limit: limit, lease: .seconds(60), token: UUID(), after: pivot)
            #expect(!claimed.isEmpty && claimed.count <= limit)
            #expect(claimed.allSatisfy { $0.eventSeq == 1 }, "a claim took a message behind its queue's head")
            pivot = QueueKey.pivot(after: pivot, claimed: claimed.map(\.queue))
            taken += claimed.map(\.queue)
        }
        #expect(taken.count == Self.queues, "\(taken.count) heads claimed of \(Self.queues)")
        #expect(Set(taken.map { $0.interactionID }).count == Self.queues, "a queue was taken twice before every queue once")
        // Every head is leased now, and what waits behind them is not claimable.
        #expect(try await outbox.claim(limit: limit, lease: .seconds(60), token: UUID(), after: pivot).isEmpty)
        await pool.close()
        await app.stop()
    }

    /// Runs the claim under `EXPLAIN ANALYZE` in a transaction it rolls back; returns how many times the walk probed
    /// the waiting index (the most loops of any scan of it).
    static func queuesProbed(limit: Int, on connection: PostgresConnection) async throws -> Int {
        _ = try await connection.query("BEGIN")
        _ = try await connection.query("PREPARE walk_probe (int, bigint, uuid, uuid, uuid) AS \(WebhookOutbox.claimStatement.sql)")
        let zero = "00000000-0000-0000-0000-000000000000"
        let rows = try await connection.query(
            "EXPLAIN (ANALYZE, COSTS OFF) EXECUTE walk_probe (\(limit), 60000, '\(UUID().uuidString)', '\(zero)', '\(zero)')")
        _ = try await connection.query("ROLLBACK")
        _ = try await connection.query("DEALLOCATE walk_probe")
        let lines = try rows.map { try $0.decode(#""QUERY PLAN""#, as: String.self) }
        #expect(!lines.contains { $0.contains("Seq Scan on webhook_messages") }, "the claim scans the outbox:\n\(lines)")
        return lines.filter { $0.contains("webhook_messages_waiting") }.compactMap { line -> Int? in
            guard let range = line.range(of: "loops=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }.max() ?? 0
    }
}
