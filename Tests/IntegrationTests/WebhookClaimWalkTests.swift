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
        let outbox = try await OutboxByHand.start(path: "/walk")
        defer { outbox.receiver.stop() }
        // 300 queues with two pending messages each: only the first of each heads its queue; and an outbox of some
        // thousands of finished messages, as a running one has (at this size a scan would win).
        try await outbox.addPending(queues: Self.queues, perQueue: 2)
        try await outbox.addFinished(5000)
        _ = try await outbox.app.database.query("ANALYZE webhook_messages")

        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: outbox.app.database.url), maxConnections: 1)
        let statements = WebhookOutbox(pool: pool)
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
            let claimed = try await statements.claim(limit: limit, lease: .seconds(60), token: UUID(), after: pivot)
            #expect(!claimed.isEmpty && claimed.count <= limit)
            #expect(claimed.allSatisfy { $0.eventSeq == 1 }, "a claim took a message behind its queue's head")
            pivot = QueueKey.pivot(after: pivot, claimed: claimed.map(\.queue))
            taken += claimed.map(\.queue)
        }
        #expect(taken.count == Self.queues, "\(taken.count) heads claimed of \(Self.queues)")
        #expect(Set(taken.map { $0.interactionID }).count == Self.queues, "a queue was taken twice before every queue once")
        // Every head is leased now, and what waits behind them is not claimable.
        #expect(try await statements.claim(limit: limit, lease: .seconds(60), token: UUID(), after: pivot).isEmpty)
        await pool.close()
        await outbox.app.stop()
    }

    /// Runs the claim under `EXPLAIN ANALYZE` in a transaction it rolls back; returns how many times the walk probed
    /// the waiting index (the most loops of any scan of it).
    static func queuesProbed(limit: Int, on connection: PostgresConnection) async throws -> Int {
        let zero = "00000000-0000-0000-0000-000000000000"
        let lines = try await analyzedPlan(of: WebhookOutbox.claimStatement.sql, types: "int, bigint, uuid, uuid, uuid",
                                           arguments: "\(limit), 60000, '\(UUID().uuidString)', '\(zero)', '\(zero)'",
                                           on: connection)
        #expect(!lines.contains { $0.contains("Seq Scan on webhook_messages") }, "the claim scans the outbox:\n\(lines)")
        return lines.filter { $0.contains("webhook_messages_waiting") }.compactMap { line -> Int? in
            guard let range = line.range(of: "loops=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }.max() ?? 0
    }
}
