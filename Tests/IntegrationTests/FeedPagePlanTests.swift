import Foundation
import Postgres
import Testing
@testable import Feeds

/// Feed pages are prepared statements, so after five runs Postgres may settle on a generic plan. The page after a
/// cursor must still seek to the cursor in the page index (a plan that reads the feed from its newest item and
/// filters would make every deep page cost as much as the pages before it); that is why the first page and the
/// page after a cursor are two statements, not one with an optional cursor.
@Suite("Feed page plans", .timeLimit(.minutes(10)))
struct FeedPagePlanTests {
    @Test func thePageAfterACursorSeeksToItInTheGenericPlanToo() async throws {
        let app = try await TestApp.start()
        let who = try await FeedsEndToEndTests.actors(app)
        #expect(try await FeedsEndToEndTests.post(app, who.apiKey, feed: "deep", title: "first").status == 201)
        _ = try await app.database.query("""
            INSERT INTO feed_items (feed_id, title, published_at)
            SELECT f.id, 'item ' || n, now() - n * interval '1 minute' FROM feeds f, generate_series(1, 5000) AS n
            WHERE f.key = 'deep'
            """)
        _ = try await app.database.query("ANALYZE feed_items")
        let tenant = try await app.database.query("SELECT tenant_id::text AS id FROM feeds WHERE key = 'deep'")
        let tenantID = try tenant[0].decode("id", as: String.self)
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        try await pool.withConnection { connection in
            for mode in ["force_custom_plan", "force_generic_plan"] {
                _ = try await connection.query("SELECT set_config('plan_cache_mode', $1, false)", [mode])
                let plan = try await queryPlan(of: FeedStore.pageAfterStatement.sql, types: "uuid, text, int, bigint, uuid",
                                               arguments: [tenantID, "deep", "21", "1700000000000000", UUID().uuidString],
                                               on: connection)
                let seek = plan.split(separator: "\n").contains { $0.contains("Index Cond") && $0.contains("published_at") }
                #expect(seek, "\(mode): the page after a cursor does not seek to it:\n\(plan)")
                // The batched form: each feed's cursor comes from the batch's arrays, and each still seeks to it.
                let batched = try await queryPlan(
                    of: FeedStore.pagesAfterStatement.sql, types: "uuid[], text[], int[], bigint[], uuid[]",
                    arguments: ["{\(tenantID),\(tenantID)}", "{deep,deep}", "{21,21}", "{1700000000000000,1600000000000000}",
                                "{\(UUID().uuidString),\(UUID().uuidString)}"],
                    on: connection)
                let batchedSeek = batched.split(separator: "\n").contains { $0.contains("Index Cond") && $0.contains("published_at") }
                #expect(batchedSeek, "\(mode): the batched page after a cursor does not seek to it:\n\(batched)")
            }
        }
        await pool.close()
        await app.stop()
    }
}
