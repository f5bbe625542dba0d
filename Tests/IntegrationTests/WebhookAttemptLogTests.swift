import Foundation
import Testing
import TestSupport

/// The attempt log lists every attempt once, however it is stored: a first attempt that delivers stays in its
/// message's row (no row in `webhook_attempts`), the others are rows of the log, and a redelivery moves the kept one
/// into the log. What the API lists is compared with what the receiver got.
@Suite("Webhook attempt log", .serialized, .timeLimit(.minutes(10)))
struct WebhookAttemptLogTests {
    /// Every page of the endpoint's attempts, `limit` at a time.
    static func allAttempts(_ scene: WebhookScene, _ endpoint: String, limit: Int) async throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var cursor: String?
        repeat {
            let path = "/v1/webhooks/endpoints/\(endpoint)/attempts?limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try await scene.call("GET", path).json()
            items += page["items"] as? [[String: Any]] ?? []
            cursor = page["next_cursor"] as? String
        } while cursor != nil
        return items
    }

    static func logRows(_ app: TestApp, _ endpoint: String) async throws -> Int64 {
        try await app.database.query("SELECT count(*)::bigint AS n FROM webhook_attempts WHERE endpoint_id = $1::uuid",
                                     [endpoint])[0].decode("n")
    }

    @Test func everyAttemptIsListedOnceNewestFirstWhetherKeptInItsRowOrInTheLog() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/log", receiver: receiver,
                                                            events: ["message.created"])
        let endpointID = endpoint["id"] as? String ?? ""
        var generator = SplitMix64(seed: 406)
        let interactions = [try await scene.openInteraction(), try await scene.openInteraction(), try await scene.openInteraction()]
        let count = 25
        for n in 0 ..< count {
            _ = try await scene.post("m\(n)", to: interactions[Int.random(in: 0 ..< 3, using: &generator)], as: scene.customer)
        }
        #expect(await eventually(timeout: .seconds(30)) { (try? await receiver.deliveries().count) ?? 0 >= count })
        // An attempt is recorded after its answer: the receiver can hold a delivery whose record is on its way.
        #expect(await eventually { ((try? await Self.allAttempts(scene, endpointID, limit: 100)) ?? []).count >= count })
        let delivered = try await receiver.deliveries()

        // Listed seven at a time: one attempt per delivery the receiver got, each once, newest first.
        var listed = try await Self.allAttempts(scene, endpointID, limit: 7)
        #expect(listed.count == delivered.count)
        #expect(Set(listed.compactMap { $0["id"] as? String }).count == listed.count, "an attempt listed twice")
        #expect(Set(listed.compactMap { $0["webhook_id"] as? String }) == Set(delivered.map(\.webhookID)))
        #expect(listed.allSatisfy { $0["outcome"] as? String == "delivered" && $0["attempt"] as? Int == 1
                                    && $0["response_status"] as? Int == 200 && $0["event_type"] as? String == "message.created" })
        let times = listed.compactMap { $0["attempted_at"] as? String }
        #expect(times == times.sorted(by: >), "not newest first")
        // Delivered at the first try, every attempt stayed in its message's row.
        #expect(try await Self.logRows(app, endpointID) == 0)

        // A redelivery: the kept attempt moves into the log, and the new first attempt is kept in the row.
        let again = delivered[Int.random(in: 0 ..< delivered.count, using: &generator)].webhookID
        #expect(try await scene.call("POST", "/v1/webhooks/messages/\(again)/redeliver").status == 202)
        #expect(await eventually(timeout: .seconds(30)) { (try? await receiver.deliveries().count) ?? 0 >= count + 1 })
        #expect(await eventually { ((try? await Self.allAttempts(scene, endpointID, limit: 100)) ?? []).count == count + 1 })
        listed = try await Self.allAttempts(scene, endpointID, limit: 4)
        #expect(listed.count == count + 1)
        let ofAgain = listed.filter { $0["webhook_id"] as? String == again }
        #expect(ofAgain.count == 2 && Set(ofAgain.compactMap { $0["id"] as? String }).count == 2)
        #expect(ofAgain.allSatisfy { $0["attempt"] as? Int == 1 })
        #expect(try await Self.logRows(app, endpointID) == 1)
        await app.stop()
    }
}
