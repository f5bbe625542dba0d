import Foundation
import Postgres
import Testing
import Webhooks

/// The outbox trigger maps stored events to webhook event types in SQL (`webhook_event_type`); the API and the
/// endpoints' subscriptions know them from `WebhookEventType`. The two must agree on every kind and state.
@Suite("Webhook event types in the database", .timeLimit(.minutes(10)))
struct WebhookEventTypeMappingTests {
    @Test func theDatabaseMapsEveryKindAndStateAsSwiftDoes() async throws {
        let database = try await MigratedDatabase.create(maxConnections: 1)
        let kinds = ["state", "message", "media", "read", "assignment", "typing"]
        let states: [String?] = [nil, "started", "ended", "failed", "paused"]
        let pairs = kinds.flatMap { kind in states.map { (kind, $0) } }
        do {
            let rows = try await database.pool.withConnection { connection in
                try await connection.query("""
                    SELECT p.kind, p.state, webhook_event_type(p.kind, p.state) AS type
                    FROM unnest($1::text[], $2::text[]) AS p (kind, state)
                    """, [PostgresArray(pairs.map(\.0)), PostgresArray(pairs.map(\.1))])
            }
            #expect(rows.count == pairs.count)
            for row in rows {
                let kind = try row.decode("kind", as: String.self), state = try row.decode("state", as: String?.self)
                #expect(try row.decode("type", as: String?.self) == WebhookEventType(kind: kind, state: state)?.rawValue,
                        "kind \(kind), state \(state ?? "null")")
            }
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }
}
