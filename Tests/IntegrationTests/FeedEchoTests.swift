import Coordination
import Foundation
import Postgres
import Testing
@testable import Feeds
import TestSupport

/// A write waits for its own change notice to come back through the listener (so other replicas have it), for no
/// longer than its timeout, and that echo retires nothing: the page read after the write stays cached.
@Suite("Feed writes and their notices' echoes", .timeLimit(.minutes(10)))
struct FeedEchoTests {
    @Test func aWriteIsAcknowledgedOnceItsEchoIsBackAndTheEchoCostsNoReload() async throws {
        let database = try await MigratedDatabase.create(maxConnections: 4)
        let tenant = try await database.tenants(["T"])[0]
        let service = FeedService(store: FeedStore(pool: database.pool), echoTimeout: .seconds(60))
        let listener = try PostgresListener(configuration: PostgresConfiguration(connectionString: database.database.url),
                                            channels: [FeedStore.channel], inline: service.receive)
        listener.start()
        let connected = await eventually(timeout: .seconds(30)) { listener.isConnected }
        try #require(connected)
        let feed = FeedAddress(tenantID: tenant, key: "news")
        let key = FeedPageKey(feed: feed, limit: 20, cursor: nil)

        let start = ContinuousClock.now
        _ = try await service.insert(Self.item("first"), into: feed)
        #expect(ContinuousClock.now - start < .seconds(30), "ended by the echo, well before the 60 s timeout")
        guard case .page(let page) = try await service.page(key) else { Issue.record("no feed after an insert"); return }
        #expect(String(decoding: page.body, as: UTF8.self).contains("first"))
        let loads = service.statistics.loadsStarted
        for _ in 0 ..< 5 { _ = try await service.page(key) }
        #expect(service.cachedPage(key) != nil)
        #expect(service.statistics.loadsStarted == loads, "the page read after the write was loaded again")

        await listener.stop()
        await database.drop()
    }

    @Test func withoutItsEchoAWriteWaitsOnlyItsTimeout() async throws {
        let database = try await MigratedDatabase.create(maxConnections: 2)
        let tenant = try await database.tenants(["T"])[0]
        let service = FeedService(store: FeedStore(pool: database.pool), echoTimeout: .milliseconds(100))
        service.receive(.listening(afterGap: false)) // a listener that hears nothing
        let start = ContinuousClock.now
        _ = try await service.insert(Self.item("first"), into: FeedAddress(tenantID: tenant, key: "news"))
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(100) && waited < .seconds(30), "\(waited)")
        await database.drop()
    }

    static func item(_ title: String) -> FeedStore.NewItem {
        FeedStore.NewItem(title: title, body: "", url: nil, imageURL: nil, publishedAt: nil)
    }
}
