import Postgres
import Testing
@testable import Interactions

/// A replica where nobody watches does no work for every write's notice: the inbox's dispatcher is not woken, and the
/// interactions' notices are not parsed.
@Suite("Notices with nobody watching", .timeLimit(.minutes(1)))
struct InboxWakeTests {
    /// A pool that never connects: only the followers' own bookkeeping is exercised, and a notice that got as far as a
    /// log read would fail and be retried, not skipped.
    static func unreachablePool() -> PostgresPool {
        PostgresPool(configuration: PostgresConfiguration(connectionString: "host=/nonexistent"), maxConnections: 1)
    }

    @Test func noticesWithNobodyWatchingDoNotWakeTheDispatcher() async {
        let pool = Self.unreachablePool()
        let feed = InboxFeed(pool: pool)
        for seq in 1...50 { feed.noticed(["5b1e3e9a-2f7c-4d8e-9a61-0c7d2b4f8e13:\(seq)"]) }
        feed.noticed()  // a reconnection's catch-up: nothing to catch up for nobody
        #expect(feed.noticeWakes == 0)
        await pool.close()
    }

    @Test func interactionNoticesWithNoLiveStreamAreNotParsed() async {
        let pool = Self.unreachablePool()
        let events = InteractionEvents(pool: pool)
        for seq in 1...50 {
            await events.handle(notices: ["5b1e3e9a-2f7c-4d8e-9a61-0c7d2b4f8e13:\(seq)", "typing:not-even-a-notice"])
        }
        #expect(events.noticeRunsMatched == 0)
        #expect(events.dispatchFailures == 0)
        await pool.close()
    }
}
