import Postgres
import Testing
@testable import Interactions

/// A replica where no agent holds an inbox stream does not wake the inbox's dispatcher for every write's notice.
@Suite("Inbox wake-ups", .timeLimit(.minutes(1)))
struct InboxWakeTests {
    @Test func noticesWithNobodyWatchingDoNotWakeTheDispatcher() async {
        // The dispatcher is not started and the pool never connects: only the feed's own bookkeeping is exercised.
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: "host=/nonexistent"), maxConnections: 1)
        let feed = InboxFeed(pool: pool)
        for seq in 1...50 { feed.noticed(["5b1e3e9a-2f7c-4d8e-9a61-0c7d2b4f8e13:\(seq)"]) }
        feed.noticed()  // a reconnection's catch-up: nothing to catch up for nobody
        #expect(feed.noticeWakes == 0)
        await pool.close()
    }
}
