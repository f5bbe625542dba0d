import Accounts
import App
import Coordination
import Foundation
import Interactions
import Postgres
import Testing

/// Live dispatch reads the log once for a run of notices over many interactions. What each subscriber receives must
/// be exactly what notice-by-notice dispatch gave it (stored events in order, typing where it came), only its own
/// interaction's events (interactions of two tenants side by side), and the run must cost one read, not one per
/// interaction.
@Suite("Live dispatch in runs", .timeLimit(.minutes(10)))
struct BatchedDispatchTests {
    @Test func aRunOfNoticesPublishesWhatNoticeByNoticeDoesInOneRead() async throws {
        let database = try await TestDatabase.create()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url), maxConnections: 2)
        _ = try await Migrator.apply(Migrations.all, pool: pool)
        // Two tenants, 20 interactions each, with 1 to 4 events logged; the notices name them in a shuffled order,
        // with typing among them.
        var random = SystemRandomNumberGenerator()
        var interactions: [UUID] = []
        var notices: [String] = []
        try await pool.withConnection { connection in
            for tenantName in ["A", "B"] {
                let tenant = try await connection.query("INSERT INTO tenants (name) VALUES ($1) RETURNING id", [tenantName])
                let tenantID: UUID = try tenant[0].decode("id")
                for _ in 0 ..< 20 {
                    let id = UUID()
                    let count = Int64.random(in: 1 ... 4, using: &random)
                    _ = try await connection.query("""
                        INSERT INTO interactions (id, tenant_id, customer_id, state, last_seq)
                        VALUES ($1::uuid, $2::uuid, 'u', 'started', $3::bigint)
                        """, [id, tenantID, count])
                    _ = try await connection.query("""
                        INSERT INTO interaction_events (interaction_id, seq, kind, payload)
                        SELECT $1::uuid, n, 'message', jsonb_build_object('text', $1::text || ':' || n)
                        FROM generate_series(1, $2::bigint) AS n
                        """, [id, count])
                    interactions.append(id)
                    for seq in 1 ... count {
                        notices.append(InteractionNotice.stored(id, seq: seq).payload)
                        if Bool.random(using: &random) {
                            notices.append(InteractionNotice.typing(id, isTyping: true, role: "agent", user: "a").payload)
                        }
                    }
                }
            }
        }
        // Shuffle across interactions, keeping each interaction's own notices in order (as NOTIFY delivers them).
        var queues = Dictionary(grouping: notices, by: { $0.replacingOccurrences(of: "typing:", with: "").prefix(36) })
        var interleaved: [String] = []
        while !queues.isEmpty {
            let key = queues.keys.randomElement(using: &random)!
            interleaved.append(queues[key]!.removeFirst())
            if queues[key]!.isEmpty { queues[key] = nil }
        }

        func received(dispatch: (InteractionEvents) async -> Void) async throws -> [UUID: [InteractionStreamEvent]] {
            let events = InteractionEvents(pool: pool)
            let subscriptions = try interactions.enumerated().map { index, id in
                let principal = Principal(tenantID: UUID(), credential: .session(sessionID: UUID(), userID: "u\(index)",
                                                                                 role: .customer))
                return (id, try events.subscribe(id, for: principal))
            }
            await dispatch(events)
            events.finishAll()
            var received: [UUID: [InteractionStreamEvent]] = [:]
            for (id, subscription) in subscriptions {
                for await event in subscription.stream where event.kind != .heartbeat && event.kind != .reconnect {
                    received[id, default: []].append(event)
                }
            }
            return received
        }
        let reads = "%unnest($1::uuid[], $2::bigint[], $3::bigint[])%"
        let readsBefore = try await database.statementCalls(like: reads)
        let oneByOne = try await received { events in for notice in interleaved { await events.handle(notice: notice) } }
        let readsOneByOne = try await database.statementCalls(like: reads) - readsBefore
        let inARun = try await received { events in await events.handle(notices: interleaved) }
        let readsInARun = try await database.statementCalls(like: reads) - readsBefore - readsOneByOne

        #expect(inARun == oneByOne)
        for id in interactions {
            let stored = (inARun[id] ?? []).filter { $0.seq != nil }
            // Each subscriber got its own interaction's log, whole and in order, and nothing of the others'.
            #expect(stored.map(\.seq) == Array(1 ... Int64(stored.count)))
            #expect(stored.allSatisfy { $0.data.contains(id.uuidString.lowercased()) })
        }
        #expect(readsOneByOne >= interactions.count)
        #expect(readsInARun == 1)
        await pool.close()
        await database.drop()
    }
}
