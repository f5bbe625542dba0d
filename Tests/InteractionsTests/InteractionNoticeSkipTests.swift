import Postgres
import Testing
@testable import Interactions

/// A replica with no live interaction stream does not parse the notices every write sends.
@Suite("Interaction notices with nobody watching", .timeLimit(.minutes(1)))
struct InteractionNoticeSkipTests {
    @Test func noticesWithNoLiveStreamAreNotParsed() async {
        // The pool never connects: a notice that got as far as a log read would fail and be retried, not skipped.
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: "host=/nonexistent"), maxConnections: 1)
        let events = InteractionEvents(pool: pool)
        for seq in 1...50 {
            await events.handle(notices: ["5b1e3e9a-2f7c-4d8e-9a61-0c7d2b4f8e13:\(seq)", "typing:not-even-a-notice"])
        }
        #expect(events.noticeRunsMatched == 0)
        #expect(events.dispatchFailures == 0)
        await pool.close()
    }
}
