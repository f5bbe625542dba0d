import Foundation
import SwitchboardClient
import Testing
import TestSupport

/// The client library's agent side against the real server: the inbox stream through connections cut mid-event
/// (nothing lost or repeated, no start over), notes, presence and settings.
@Suite("The client SDK: the agent's side", .timeLimit(.minutes(10)))
struct ClientInboxTests {
    /// What an inbox stream delivered, in order.
    final class Collected: @unchecked Sendable { // `events` is guarded by `lock`
        private let lock = NSLock()
        private var events: [InboxEvent] = []
        func collect(_ stream: AsyncStream<InboxEvent>) async { for await event in stream { lock.withLock { events.append(event) } } }
        var all: [InboxEvent] { lock.withLock { events } }
        var notes: [String] { all.compactMap { if case .note(let note) = $0 { note.note.text } else { nil } } }
        var ended: Bool { all.contains { if case .snapshotEnd = $0 { true } else { false } } }
    }

    static func client(port: Int, token: String) -> SwitchboardClient {
        SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, tokenProvider: { token },
                          retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(50)),
                          eventPolicy: EventStreamPolicy(defaultReconnectDelay: .milliseconds(50), jitter: 0))
    }

    @Test func theInboxThroughCutConnections() async throws {
        let app = try await TestApp.start(reconnectDelay: .milliseconds(50))
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let proxy = try CuttingProxy(upstream: app.port, budgets: [700, 900, 650, 1100, 800, 760])
        let agent = Self.client(port: proxy.port, token: who.agent)
        let collected = Collected()
        let consumer = Task { await collected.collect(agent.inbox(states: [.started, .ended])) }
        #expect(await eventually { collected.ended }, "the snapshot arrived")

        let direct = Self.client(port: app.port, token: who.agent)
        let total = 12
        for n in 0 ..< total {
            _ = try await direct.addNote("note \(n) with enough padding to make the events long", to: id)
            try await Task.sleep(for: .milliseconds(30))
        }
        #expect(await eventually(timeout: .seconds(15)) { collected.notes.count >= total })
        try await Task.sleep(for: .milliseconds(300))
        #expect(collected.notes == (0 ..< total).map { "note \($0) with enough padding to make the events long" })
        #expect(!collected.all.contains(.reset), "reconnections resumed rather than started over")
        #expect(proxy.connections > 6, "every budget was used up")
        let last = collected.all.reversed().compactMap { if case .interaction(let entry) = $0 { entry } else { nil } }.first
        #expect(last?.lastMessage?.kind == "note" && last?.lastMessage?.text.hasPrefix("note \(total - 1)") == true)
        consumer.cancel()
        proxy.close()

        // Notes, presence and settings.
        #expect(try await direct.notes(in: id, limit: 5).items.map(\.noteSeq) == [1, 2, 3, 4, 5])
        let alice = Self.client(port: app.port, token: who.alice)
        let backend = Self.client(port: app.port, token: who.apiKey)
        let watching = Task { await Collected().collect(direct.inbox()) }
        #expect(await eventually { (try? await alice.agentsOnline()) == 1 })
        #expect(try await alice.interaction(id).agentsOnline == 1)
        #expect(try await direct.setStatus(.away).status == .away)
        #expect(try await backend.agents().map(\.status) == [.away])
        #expect(try await backend.updateSettings(autoAssign: "round_robin", maxOpenPerAgent: 3).autoAssign == "round_robin")
        #expect(try await backend.settings().maxOpenPerAgent == 3)
        #expect(try await backend.settings().retentionDays == nil)
        #expect(try await backend.setRetention(days: 90).retentionDays == 90)
        #expect(try await backend.setRetention(days: nil).retentionDays == nil)
        do {
            _ = try await alice.addNote("x", to: id)
            Issue.record("a customer wrote a note")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 403)
        }
        watching.cancel()
        await app.stop()
    }
}
