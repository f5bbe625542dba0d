import Foundation
import SwitchboardClient
import Testing
import TestSupport

@Suite("The client SDK against the real server", .timeLimit(.minutes(10)))
struct ClientSDKTests {
    static func client(_ app: TestApp, _ token: String) -> SwitchboardClient {
        SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(app.port)")!, tokenProvider: { token },
                          retry: RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(50)))
    }

    @Test func anInteractionThroughTheSDK() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let alice = Self.client(app, who.alice)
        let started = try await alice.startInteraction(subject: "Card blocked")
        #expect(started.state == .started)
        #expect(started.customerID == "alice")
        let message = try await alice.sendMessage("Hello from the app", to: started.id)
        #expect(message.text == "Hello from the app")
        #expect(message.senderRole == "customer")
        try await alice.setTyping(true, in: started.id)
        try await alice.setMedia(.audio, .requested, in: started.id)
        #expect(try await alice.interaction(started.id).subject == "Card blocked")
        #expect(try await alice.interactions(state: .started).items.map(\.id) == [started.id])
        let ended = try await alice.endInteraction(started.id)
        #expect(ended.state == .ended)
        #expect(ended.endedAt != nil)
        do {
            _ = try await alice.sendMessage("too late", to: started.id)
            Issue.record("expected a 409")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 409)
            #expect(problem.title == "Conflict")
        }
        try await alice.revokeSession()
        do {
            _ = try await alice.interactions()
            Issue.record("expected a 401")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 401)
        }
        await app.stop()
    }

    @Test func theSessionAndAnInteractionsHistoryPageByPage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let alice = Self.client(app, who.alice)
        let session = try await alice.currentSession()
        #expect(session.userID == "alice" && session.role == .customer && session.expiresAt > Date())
        let interaction = try await alice.startInteraction()
        var sent: [Message] = []
        for text in ["one", "two", "three"] { sent.append(try await alice.sendMessage(text, to: interaction.id)) }

        let first = try await alice.messages(in: interaction.id, limit: 2)
        #expect(first.items.map(\.text) == ["one", "two"] && first.hasMore)
        let rest = try await alice.messages(in: interaction.id, limit: 2, cursor: first.nextCursor)
        #expect(rest.items.map(\.text) == ["three"] && !rest.hasMore)
        var history: [Message] = []
        for try await message in alice.allMessages(in: interaction.id, pageSize: 1) { history.append(message) }
        #expect(history == sent, "the same messages, with the seq the live events carry")
        do {
            _ = try await Self.client(app, who.bob).messages(in: interaction.id)
            Issue.record("expected a 404")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 404)
        }
        await app.stop()
    }

    @Test func feedsAreRevalidatedWithETagsAndWalkedPageByPage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        for n in 0 ..< 5 {
            #expect(try await app.call("POST", "/v1/feeds/news/items", token: who.apiKey, body: #"{"title":"n\#(n)"}"#).status == 201)
        }
        let alice = Self.client(app, who.alice)
        let first = try await alice.feed("news", limit: 10)
        let again = try await alice.feed("news", limit: 10)
        #expect(first == again)
        #expect(first.items.map(\.title) == ["n4", "n3", "n2", "n1", "n0"])
        let metrics = try await app.metrics().text
        #expect(MetricsTests.sample(metrics, #"switchboard_http_requests_total{route="/v1/feeds/{key}",method="GET",status="304"}"#) == 1)
        var walked: [String] = []
        for try await item in alice.allItems(of: "news", pageSize: 2) { walked.append(item.title) }
        #expect(walked == ["n4", "n3", "n2", "n1", "n0"])
        await app.stop()
    }
}

/// The README's "Swift client for apps" example, run against the server: the same calls in the same order.
@Suite("The client SDK's README example", .timeLimit(.minutes(10)))
struct ClientSDKReadmeExampleTests {
    @Test func openAnInteractionFollowItSendAMessage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(app.port)")!,
                                       tokenProvider: { who.alice })
        let interaction = try await client.startInteraction(subject: "Card blocked")
        let seen = LockedEvents()
        let live = Task {
            for await event in client.events(for: interaction.id) {
                switch event {
                case .state, .message, .typing, .media, .read, .assignment, .redacted, .refused: seen.append(event)
                }
            }
            seen.markFinished()
        }
        #expect(await eventually { !seen.snapshot.events.isEmpty })
        _ = try await client.sendMessage("My card was blocked abroad", to: interaction.id)
        try await client.setTyping(true, in: interaction.id)
        // Typing is not stored: it is sent as it happens, and a dispatcher that reads the log late may deliver
        // stored events that came after it first. Wait for it before ending, so the end cannot overtake it.
        #expect(await eventually {
            seen.snapshot.events.contains { if case .typing(let typing) = $0 { typing.isTyping } else { false } }
        })
        _ = try await client.endInteraction(interaction.id)
        await live.value
        let kinds = seen.snapshot.events.map { event -> String in
            switch event {
            case .state(let change): "state:\(change.state.rawValue)"
            case .message(let message): "message:\(message.text)"
            case .typing(let typing): "typing:\(typing.isTyping)"
            case .media: "media"
            case .read(let receipt): "read:\(receipt.readThrough)"
            case .assignment(let change): "assignment:\(change.assignedAgentID ?? "none")"
            case .redacted(let redaction): "redacted:\(redaction.eventIDs)"
            case .refused(let problem): "refused:\(problem.status)"
            }
        }
        #expect(kinds.filter { !$0.hasPrefix("typing") } == ["state:started", "message:My card was blocked abroad", "state:ended"])
        #expect(kinds.contains("typing:true"))
        #expect(seen.snapshot.finished, "the loop ended with the interaction")
        await app.stop()
    }
}

@Suite("The client SDK over a bad network", .timeLimit(.minutes(10)))
struct ClientSDKRetryTests {
    @Test func aPOSTRetriedAfterADroppedResponseCreatesOneMessage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let proxy = try DroppingProxy(upstream: app.port) { head in head.hasPrefix("POST /v1/interactions/") && head.contains("/messages") }
        let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, tokenProvider: { who.alice },
                                       retry: RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(50)))
        let message = try await client.sendMessage("sent once", to: id)
        #expect(proxy.hasDropped, "the first response must have been lost on the way")
        #expect(message.text == "sent once")
        let stored = try await app.database.query("SELECT count(*) AS n FROM interaction_events WHERE kind = 'message'")
        #expect(try stored[0].decode("n", as: Int64.self) == 1)
        proxy.close()
        await app.stop()
    }

    @Test func aPOSTAnswered502ByTheProxyIsRetriedAndCreatesOneMessage() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        // As nginx answers when the replica it picked closed the connection while shutting down.
        let proxy = try DroppingProxy(upstream: app.port, answering: 502) { head in head.contains("/messages") }
        let client = SwitchboardClient(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, tokenProvider: { who.alice },
                                       retry: RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(50)))
        let message = try await client.sendMessage("after a 502", to: id)
        #expect(proxy.hasDropped && message.text == "after a 502")
        let stored = try await app.database.query("SELECT count(*) AS n FROM interaction_events WHERE kind = 'message'")
        #expect(try stored[0].decode("n", as: Int64.self) == 1)
        proxy.close()
        await app.stop()
    }
}

@Suite("The client SDK: read positions and assignment", .timeLimit(.minutes(10)))
struct ClientReadAndAssignmentTests {
    @Test func markReadClaimAssignAndTheirEvents() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let alice = ClientSDKTests.client(app, who.alice)
        let agent = ClientSDKTests.client(app, who.agent)
        let interaction = try await alice.startInteraction(subject: "Card blocked")
        #expect(interaction.unreadCount == 0 && interaction.readByOtherThrough == 0 && interaction.assignedAgentID == nil)

        let seen = LockedEvents()
        let live = Task {
            for await event in agent.events(for: interaction.id) { seen.append(event) }
            seen.markFinished()
        }
        #expect(try await agent.interactions(assigned: .unassigned).items.map(\.id) == [interaction.id])
        let claimed = try await agent.claim(interaction.id)
        #expect(claimed.assignedAgentID == "agent-7")
        #expect(try await agent.interactions(assigned: .me).items.map(\.id) == [interaction.id])
        let hello = try await agent.sendMessage("Hello, I can help", to: interaction.id)
        #expect(try await alice.interaction(interaction.id).unreadCount == 1)

        let position = try await alice.markRead(interaction.id, through: hello.seq)
        #expect(position.readThrough == hello.seq && position.unreadCount == 0)
        #expect(try await alice.markRead(interaction.id, through: 1).readThrough == hello.seq)
        #expect(try await agent.interaction(interaction.id).readByOtherThrough == hello.seq)
        let unassigned = try await agent.assign(interaction.id, to: nil)
        #expect(unassigned.assignedAgentID == nil)
        do {
            _ = try await alice.markRead(interaction.id, through: 999)
            Issue.record("expected a 400")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 400 && problem.type == "/problems/unknown-event-id")
        }
        do {
            _ = try await alice.interactions(assigned: .me)
            Issue.record("expected a 400")
        } catch SwitchboardError.problem(let problem) {
            #expect(problem.status == 400)
        }
        _ = try await alice.endInteraction(interaction.id)
        await live.value
        let stored = seen.snapshot.events.compactMap { event -> String? in
            switch event {
            case .state(let change): "state:\(change.state.rawValue)"
            case .message: "message"
            case .read(let receipt): "read:\(receipt.readerID):\(receipt.readThrough)"
            case .assignment(let change): "assignment:\(change.assignedAgentID ?? "none"):\(change.by ?? "auto")"
            case .typing, .media, .redacted, .refused: nil
            }
        }
        #expect(stored == ["state:started", "assignment:agent-7:agent-7", "message", "read:alice:\(hello.seq)",
                           "assignment:none:agent-7", "state:ended"])
        await app.stop()
    }
}
