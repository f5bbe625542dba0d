import Accounts
import App
import Coordination
import Foundation
import Interactions
import Postgres
import Testing
import TestSupport

/// A live-dispatch read that fails is retried, not dropped: the failed read could hold an interaction's final event,
/// and its streams would then stay open until their clients gave up.
@Suite("Live dispatch retries failed log reads", .timeLimit(.minutes(10)))
struct LiveDispatchRetryTests {
    @Test func aFailedReadIsRetriedUntilTheEventIsDeliveredAndCounted() async throws {
        let database = try await TestDatabase.create()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 2)
        let failures = Locked<[String]>([])
        let events = InteractionEvents(pool: pool, onDispatchFailure: { error in failures.withLock { $0.append("\(error)") } })
        let id = UUID()
        let principal = Principal(tenantID: UUID(), credential: .session(sessionID: UUID(), userID: "u", role: .customer))
        let subscription = try events.subscribe(id, for: principal)
        // The log holds the interaction's final event, but the table is out of reach: every read fails until it is
        // back (renamed in one statement, so the event is there the moment reads can succeed).
        _ = try await Migrator.apply(Migrations.all, pool: pool)
        _ = try await pool.withConnection { connection in
            let tenant = try await connection.query("INSERT INTO tenants (name) VALUES ('T') RETURNING id")
            let tenantID: UUID = try tenant[0].decode("id")
            _ = try await connection.query("""
                INSERT INTO interactions (id, tenant_id, customer_id, state, last_seq) VALUES ($1::uuid, $2::uuid, 'u', 'ended', 1)
                """, [id, tenantID])
            _ = try await connection.query("""
                INSERT INTO interaction_events (interaction_id, seq, kind, payload)
                VALUES ($1::uuid, 1, 'state', '{"state":"ended"}')
                """, [id])
            return try await connection.query("ALTER TABLE interaction_events RENAME TO interaction_events_away")
        }
        let handling = Task { await events.handle(notice: InteractionNotice.stored(id, seq: 1).payload) }
        #expect(await eventually(timeout: .seconds(10)) { events.dispatchFailures >= 2 })
        _ = try await pool.withConnection { connection in
            try await connection.query("ALTER TABLE interaction_events_away RENAME TO interaction_events")
        }
        await handling.value
        var received: [InteractionStreamEvent] = []
        for await event in subscription.stream where event.kind != .heartbeat { received.append(event) }
        #expect(received.map(\.seq) == [1])
        #expect(received.first?.terminal == true)
        #expect(failures.withLock { $0.count } == events.dispatchFailures)
        events.finishAll()
        await pool.close()
        await database.drop()
    }
}
