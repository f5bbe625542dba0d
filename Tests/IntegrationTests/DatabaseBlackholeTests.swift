import Foundation
import Testing
import TestSupport

/// The network to PostgreSQL goes silent — no FIN, no RST — then heals. Requests get 503 within the statement
/// deadline instead of hanging for hours; the pool recovers; the LISTEN connection notices, reconnects, and the
/// streams catch up on what was committed meanwhile.
@Suite("A blackholed database network", .timeLimit(.minutes(10)))
struct DatabaseBlackholeTests {
    @Test func requestsFailFastThePoolRecoversAndStreamsCatchUp() async throws {
        let database = try await TestDatabase.create()
        let proxy = BlackholeProxy(databaseURL: TestEnvironment.databaseURL)
        let viaProxy = "host=127.0.0.1 port=\(proxy.port) user=postgres dbname=\(database.name) connect_timeout=2"
        let app = try await TestApp.start(database: database, databaseURL: viaProxy, statementDeadline: .seconds(1),
                                          listenerLiveness: .seconds(1), poolTimeout: .seconds(2))
        let direct = try await TestApp.start(database: database)
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let stream = try await InteractionStreamTests.follow(app, id, who.alice)
        _ = try await onThread { try stream.events(1) }

        proxy.blackhole(true)
        try await Task.sleep(for: .seconds(6))  // past the token cache, so the request below needs the database
        let started = ContinuousClock.now
        let during = try await app.call("GET", "/v1/interactions/\(id)/messages", token: who.alice)
        #expect(during.status == 503, "\(during.status) \(during.text)")
        #expect(during.header("Retry-After") != nil)
        #expect(ContinuousClock.now - started < .seconds(8), "answered within the deadline and the cancel's grace")
        // Committed elsewhere while this replica cannot hear: its notice is lost to this replica's listener.
        #expect(try await direct.call("POST", "/v1/interactions/\(id)/messages", token: who.agent,
                                      body: #"{"text":"said during the outage"}"#).status == 201)

        proxy.blackhole(false)
        #expect(await eventually(timeout: .seconds(20)) {
            (try? await app.call("GET", "/v1/interactions/\(id)/messages", token: who.alice).status) == 200
        }, "the pool recovered")
        let caughtUp = try await onThread { try stream.events(1, timeout: 20) }
        #expect(caughtUp.map(\.event) == ["message"])
        #expect(caughtUp.first.map { stream.json($0)["text"] as? String } == "said during the outage")
        #expect(await eventually(timeout: .seconds(5)) { app.log.all.contains { $0.contains("change-notice listener reconnected") } },
                "the listener noticed its dead connection and reconnected (the message came by catch-up)")
        await direct.stopKeepingDatabase()
        await app.stop()
        proxy.close()
    }
}
