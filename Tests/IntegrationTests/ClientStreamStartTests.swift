import Foundation
import SwitchboardClient
import Testing
import TestSupport

/// The client library loses nothing at the start of a stream or across a token refresh.
@Suite("The client SDK: a stream's start and its credentials", .timeLimit(.minutes(10)))
struct ClientStreamStartTests {
    static func texts(_ events: [InteractionEvent]) -> [String] {
        events.compactMap { event -> String? in
            switch event {
            case .state(let change): "state:\(change.state.rawValue)"
            case .message(let message): "message:\(message.text)"
            case .refused(let problem): "refused:\(problem.status)"
            case .typing, .media, .read, .assignment, .redacted: nil
            }
        }
    }

    /// The README's example as written — no wait between opening the stream and sending — fifty times: the
    /// customer's own message, stored before the stream's first response more often than not, is never lost.
    @Test func theReadmeExampleLosesNoEventInFiftyRuns() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(app.port)")!, tokenProvider: { who.alice })
        for run in 0 ..< 50 {
            let interaction = try await client.startInteraction(subject: "Card blocked")
            let seen = LockedEvents()
            let live = Task {
                for await event in client.events(for: interaction.id) { seen.append(event) }
                seen.markFinished()
            }
            _ = try await client.sendMessage("My card was blocked abroad", to: interaction.id)
            #expect(await eventually(timeout: .seconds(5)) { Self.texts(seen.snapshot.events).count >= 2 }, "run \(run)")
            _ = try await client.endInteraction(interaction.id)
            await live.value
            #expect(Self.texts(seen.snapshot.events) == ["state:started", "message:My card was blocked abroad", "state:ended"],
                    "run \(run)")
        }
        await app.stop()
    }

    /// The stream's session expires while it is open: the server ends it with a `reconnect` event, the client asks
    /// the token provider again and resumes with its last id — every message exactly once, in order.
    @Test func aTokenThatExpiresMidStreamIsReplacedAndNothingIsLostOrRepeated() async throws {
        let app = try await TestApp.start(reconnectDelay: .milliseconds(100))
        let who = try await InteractionsEndToEndTests.people(app)
        let shortLived = try await app.createSession(apiKey: who.apiKey, user: "dora", role: "customer")
        _ = try await app.database.query("UPDATE sessions SET expires_at = now() + interval '6 seconds' WHERE user_id = 'dora'")
        let fresh = try await app.createSession(apiKey: who.apiKey, user: "dora", role: "customer")
        let current = LockedTokens(shortLived)
        let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(app.port)")!,
                                       tokenProvider: { current.next() })
        let interaction = try await client.startInteraction(subject: "Card blocked")
        let seen = LockedEvents()
        let live = Task {
            for await event in client.events(for: interaction.id) { seen.append(event) }
            seen.markFinished()
        }
        // The stream opened with the short-lived token; from now on the provider hands out the fresh one.
        #expect(await eventually { !seen.snapshot.events.isEmpty })
        current.set(fresh)
        let path = "/v1/interactions/\(interaction.id)/messages"
        for n in 0 ..< 5 {
            #expect(try await app.call("POST", path, token: who.agent, body: #"{"text":"m\#(n)"}"#).status == 201)
        }
        // Past the expiry: the first stream has been ended; these arrive over the resumed one.
        try await Task.sleep(for: .seconds(8))
        for n in 5 ..< 10 {
            #expect(try await app.call("POST", path, token: who.agent, body: #"{"text":"m\#(n)"}"#).status == 201)
        }
        #expect(try await app.call("POST", "/v1/interactions/\(interaction.id)/end", token: who.agent).status == 200)
        await live.value
        #expect(Self.texts(seen.snapshot.events) == ["state:started"] + (0 ..< 10).map { "message:m\($0)" } + ["state:ended"])
        // Start, the first stream, then exactly one reconnection — with the fresh token.
        #expect(current.handedOut == [shortLived, shortLived, fresh])
        await app.stop()
    }
}

/// The token a test's provider hands out, and every token it handed out.
final class LockedTokens: @unchecked Sendable { // `token` and `handedOut` are guarded by `lock`
    private let lock = NSLock()
    private var token: String
    private var given: [String] = []
    init(_ token: String) { self.token = token }
    func set(_ token: String) { lock.withLock { self.token = token } }
    func next() -> String { lock.withLock { given.append(token); return token } }
    var handedOut: [String] { lock.withLock { given } }
}
