import Foundation
import Testing
import TestSupport

/// Webhooks for the agents' side: a note is a `note.created` (never a `message.created`, so a backend that pushes
/// messages to customers never pushes a note), and an agent's status changes are `agent.status_changed`, in order.
@Suite("Webhooks for notes and agents' statuses", .serialized, .timeLimit(.minutes(10)))
struct WebhookAgentSideTests {
    @Test func notesAndStatusesHaveTypesOfTheirOwn() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(presenceGrace: .seconds(1), webhooks: fastWebhooks)
        let (scene, _) = try await WebhookScene.make(port: app.port, path: "/hooks", receiver: receiver)
        let interaction = try await scene.openInteraction()
        let note = try await scene.call("POST", "/v1/interactions/\(interaction)/notes", token: scene.agent,
                                        body: #"{"text":"called the branch"}"#).json()
        #expect(await eventually { (try? await receiver.deliveries().contains { $0.type == "note.created" }) == true })
        // At least once: a delivery the receiver took but answered after the sender's timeout (a loaded machine)
        // comes again, so each event is counted once, by its id.
        let firsts = WebhookAgentSideTests.firstOfEachEvent(try await receiver.deliveries())
        #expect(Set(firsts.map(\.type)) == ["interaction.started", "note.created"] && firsts.count == 2)
        let delivered = try #require(firsts.first { $0.type == "note.created" })
        #expect(delivered.verifiedWith == [0])
        #expect(delivered.data["id"] as? String == note["id"] as? String)
        #expect(delivered.data["text"] as? String == "called the branch" && delivered.data["note_seq"] as? Int == 1)
        #expect(delivered.data["interaction_id"] as? String == interaction && delivered.data["tenant_id"] as? String == scene.tenantID)
        #expect(delivered.data["event_id"] as? String == "\(interaction):note:1")

        // The agent comes online, goes away, and offline after the grace: three changes, in order.
        let stream = try await onThread { try InboxStreamTests.open(app, scene.agent) }
        #expect(await eventually { (try? await receiver.deliveries().last?.type) == "agent.status_changed" })
        #expect(try await scene.call("POST", "/v1/agents/me/status", token: scene.agent, body: #"{"status":"away"}"#).status == 200)
        stream.socket.shutdownAndClose()
        #expect(await eventually(timeout: .seconds(15)) {
            (try? await WebhookAgentSideTests.firstOfEachEvent(receiver.deliveries()).filter { $0.type == "agent.status_changed" }.count) == 3
        })
        let statuses = WebhookAgentSideTests.firstOfEachEvent(try await receiver.deliveries())
            .filter { $0.type == "agent.status_changed" }.map(\.data)
        #expect(statuses.map { $0["status"] as? String } == ["online", "away", "offline"])
        #expect(statuses.map { $0["previous_status"] as? String } == ["offline", "online", "away"])
        #expect(statuses.map { $0["event_id"] as? String } == ["agent:a-1:1", "agent:a-1:2", "agent:a-1:3"])
        #expect(statuses.allSatisfy { $0["agent_id"] as? String == "a-1" && $0["tenant_id"] as? String == scene.tenantID })
        // Nothing about the note went out as a message.
        #expect(try await receiver.deliveries().filter { $0.type == "message.created" }.isEmpty)
        await app.stop()
    }

    /// Each event's first delivery, in the order they came (a repeated `event_id` is the same event again).
    static func firstOfEachEvent(_ deliveries: [WebhookReceiver.Delivery]) -> [WebhookReceiver.Delivery] {
        var seen: Set<String> = []
        return deliveries.filter { seen.insert($0.data["event_id"] as? String ?? "").inserted }
    }
}
