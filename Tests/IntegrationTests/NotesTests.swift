import Foundation
import Testing

/// Agents' private notes: written and listed by agents, delivered once on their inbox streams, and absent from
/// everything a customer can see — streams and replays, the message list, unread counts, read positions.
@Suite("Private notes", .timeLimit(.minutes(10)))
struct NotesTests {
    @Test func notesAreForAgentsOnly() async throws {
        let app = try await TestApp.start()
        let who = try await InteractionsEndToEndTests.people(app)
        let id = try await InteractionsEndToEndTests.start(app, who.alice)
        let inbox = try await onThread { try InboxStreamTests.open(app, who.agent, query: "?state=started,ended") }
        _ = try await InboxStreamTests.next(inbox, 2)

        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.alice, body: #"{"text":"help"}"#).status == 201)
        let note = try await app.call("POST", "/v1/interactions/\(id)/notes", token: who.agent, body: #"{"text":"VIP, be kind"}"#)
        #expect(note.status == 201)
        let written = try note.json()
        #expect(written["note_seq"] as? Int == 1)
        #expect(written["after_seq"] as? Int == 2)
        #expect(written["author_id"] as? String == "agent-7")

        // The inbox: the interaction's changes (the message's and the note's may come as one: the latest summary
        // wins), then the note itself, once.
        var events: [ReceivedEvent] = []
        while !events.contains(where: { $0.event == "note" }) { events += try await InboxStreamTests.next(inbox, 1) }
        #expect(events.last?.event == "note" && events.dropLast().allSatisfy { $0.event == "interaction" })
        let summary = try #require(events.dropLast().last)
        let preview = try #require(inbox.json(summary)["last_message"] as? [String: Any])
        #expect(preview["kind"] as? String == "note" && preview["text"] as? String == "VIP, be kind")
        #expect(preview["id"] as? String == written["id"] as? String)
        let delivered = try #require(events.last)
        #expect(inbox.json(delivered)["interaction_id"] as? String == id)
        #expect(inbox.json(delivered)["id"] as? String == written["id"] as? String)
        #expect(inbox.json(delivered)["text"] as? String == "VIP, be kind")
        // The agent's unread count counts the customer's message, not the note.
        #expect(inbox.json(summary)["unread_count"] as? Int == 1)

        // Customers: no route, nothing in their stream, list, counts or positions; their ids stay dense.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/notes", token: who.alice, body: #"{"text":"x"}"#).status == 403)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/notes", token: who.alice).status == 403)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/messages", token: who.agent, body: #"{"text":"hello"}"#).status == 201)
        let customerStream = try await onThread {
            try EventStreamClient(port: app.port, path: "/v1/interactions/\(id)/events", token: who.alice, lastEventID: "0")
        }
        let replay = try await onThread { try customerStream.events(3) }
        #expect(replay.map(\.id) == ["1", "2", "3"])
        #expect(replay.map(\.event) == ["state", "message", "message"])
        #expect(!replay.contains { $0.data.contains("VIP") })
        let shown = try await app.call("GET", "/v1/interactions/\(id)", token: who.alice).json()
        #expect(shown["unread_count"] as? Int == 1)
        let messages = try await app.call("GET", "/v1/interactions/\(id)/messages", token: who.alice)
        #expect(!messages.text.contains("VIP"))
        #expect(try await app.call("POST", "/v1/interactions/\(id)/read", token: who.alice, body: #"{"event_id":4}"#).status == 400)

        // Wrap-up notes after the end; the list pages in order.
        #expect(try await app.call("POST", "/v1/interactions/\(id)/end", token: who.agent).status == 200)
        #expect(try await app.call("POST", "/v1/interactions/\(id)/notes", token: who.agent, body: #"{"text":"resolved"}"#).status == 201)
        let page = try await app.call("GET", "/v1/interactions/\(id)/notes?limit=1", token: who.agent).json()
        #expect((page["items"] as? [[String: Any]])?.map { $0["text"] as? String } == ["VIP, be kind"])
        let cursor = try #require(page["next_cursor"] as? String)
        let rest = try await app.call("GET", "/v1/interactions/\(id)/notes?cursor=\(cursor)", token: who.agent).json()
        #expect((rest["items"] as? [[String: Any]])?.map { $0["after_seq"] as? Int } == [4])

        // Validation and scope.
        for body in [#"{"text":""}"#, #"{}"#, #"{"text":"x","extra":1}"#, #"{"text":"\#(String(repeating: "x", count: 4001))"}"#] {
            let refused = try await app.call("POST", "/v1/interactions/\(id)/notes", token: who.agent, body: body)
            #expect(refused.status == 400, "\(body.prefix(30))")
        }
        let stranger = try await InteractionsEndToEndTests.people(app, tenant: "Other")
        #expect(try await app.call("POST", "/v1/interactions/\(id)/notes", token: stranger.agent, body: #"{"text":"x"}"#).status == 404)
        #expect(try await app.call("GET", "/v1/interactions/\(id)/notes", token: stranger.agent).status == 404)
        await app.stop()
    }
}
