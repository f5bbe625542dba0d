import Accounts
import Foundation
import Interactions
import Postgres
import Testing
import Webhooks
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Short retries, so the tests see the schedule at work in seconds.
/// The timeout is long enough that a loaded machine's slow answer is not taken for a failure (tests count attempts).
let fastWebhooks = WebhookSettings(retrySchedule: [1, 1, 2, 2, 2], timeout: .seconds(10), allowPrivateTargets: true,
                                   concurrency: 8, pollInterval: .milliseconds(200))

/// A tenant with an endpoint at the receiver, a customer and an agent, on one running service.
struct WebhookScene {
    let port: Int
    let tenantID: String
    let apiKey: String
    let customer: String
    let agent: String

    static func make(port: Int, path: String, receiver: WebhookReceiver,
                     events: [String] = WebhookEventType.allCases.map(\.rawValue)) async throws -> (WebhookScene, [String: Any]) {
        let admin = ["Authorization": "Bearer \(TestApp.adminToken)"]
        let tenant = try await request(port: port, "POST", "/v1/admin/tenants", headers: admin, body: #"{"name":"Hooks"}"#).json()
        let apiKey = tenant["api_key"] as? String ?? ""
        func session(_ user: String, _ role: String) async throws -> String {
            try await request(port: port, "POST", "/v1/sessions", headers: ["Authorization": "Bearer \(apiKey)"],
                              body: #"{"user_id":"\#(user)","role":"\#(role)"}"#).json()["token"] as? String ?? ""
        }
        let scene = WebhookScene(port: port, tenantID: tenant["id"] as? String ?? "", apiKey: apiKey,
                                 customer: try await session("c-1", "customer"), agent: try await session("a-1", "agent"))
        let body = try JSONSerialization.data(withJSONObject: ["url": receiver.url(path), "events": events])
        let created = try await scene.call("POST", "/v1/webhooks/endpoints", body: String(decoding: body, as: UTF8.self))
        #expect(created.status == 201)
        let endpoint = try created.json()
        try await receiver.setSecrets([endpoint["secret"] as? String ?? ""])
        return (scene, endpoint)
    }

    func call(_ method: String, _ path: String, token: String? = nil, body: String? = nil) async throws -> RawResponse {
        try await request(port: port, method, path, headers: ["Authorization": "Bearer \(token ?? apiKey)"], body: body)
    }

    /// Opens an interaction as the customer; returns its id.
    func openInteraction() async throws -> String {
        try await call("POST", "/v1/interactions", token: customer, body: "{}").json()["id"] as? String ?? ""
    }

    func post(_ text: String, to interaction: String, as token: String) async throws -> [String: Any] {
        let response = try await call("POST", "/v1/interactions/\(interaction)/messages", token: token, body: #"{"text":"\#(text)"}"#)
        #expect(response.status == 201)
        return try response.json()
    }

    func attempts(of endpoint: String) async throws -> [[String: Any]] {
        try await call("GET", "/v1/webhooks/endpoints/\(endpoint)/attempts?limit=100").json()["items"] as? [[String: Any]] ?? []
    }
}

@Suite("Webhooks end to end", .serialized, .timeLimit(.minutes(10)))
struct WebhookTests {
    @Test func aMessageIsDeliveredOnceSignedAsStandardWebhooksDefine() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/hooks", receiver: receiver)
        let interaction = try await scene.openInteraction()
        let question = try await scene.post("where is my order?", to: interaction, as: scene.customer)
        let answer = try await scene.post("on its way", to: interaction, as: scene.agent)
        #expect(await eventually { (try? await receiver.deliveries().count) == 3 })
        try await Task.sleep(for: .seconds(1)) // nothing more arrives: each message once
        let deliveries = try await receiver.deliveries()
        #expect(deliveries.map(\.type) == ["interaction.started", "message.created", "message.created"])
        #expect(Set(deliveries.map(\.webhookID)).count == 3)
        for delivery in deliveries {
            #expect(delivery.verifiedWith == [0], "standardwebhooks did not verify \(delivery.webhookID)")
            #expect(delivery.webhookID.hasPrefix("msg_"))
            #expect(delivery.data["tenant_id"] as? String == scene.tenantID)
            #expect(delivery.data["interaction_id"] as? String == interaction)
            #expect(delivery.payload["timestamp"] is String)
        }
        let started = deliveries[0].data
        #expect(started["id"] as? String == interaction && started["state"] as? String == "started")
        #expect(started["event_id"] as? String == "\(interaction):1")
        let reply = deliveries[2].data
        #expect(reply["sender_role"] as? String == "agent" && reply["text"] as? String == "on its way")
        #expect(reply["id"] as? String == answer["id"] as? String && reply["seq"] as? Int == answer["seq"] as? Int)
        #expect(reply["created_at"] as? String == answer["created_at"] as? String)
        #expect(deliveries[1].data["sender_role"] as? String == "customer" && deliveries[1].data["id"] as? String == question["id"] as? String)
        let attempts = try await scene.attempts(of: endpoint["id"] as? String ?? "")
        #expect(attempts.count == 3 && attempts.allSatisfy { $0["outcome"] as? String == "delivered" && $0["response_status"] as? Int == 200 })
        // Ending it is delivered too.
        #expect(try await scene.call("POST", "/v1/interactions/\(interaction)/end", token: scene.agent).status == 200)
        #expect(await eventually { (try? await receiver.deliveries().last?.type) == "interaction.ended" })
        // The receiver has the last delivery a moment before the worker records the attempt: wait for the record.
        #expect(await eventually {
            let metrics = (try? await app.metrics().text) ?? ""
            return metrics.contains(#"switchboard_webhook_attempts_total{outcome="delivered"} 4"#)
                && metrics.contains("switchboard_webhook_queue_depth 0")
                && metrics.contains("switchboard_webhook_oldest_undelivered_seconds 0")
        })
        await app.stop()
    }

    /// `message.created` carries each attachment's metadata, never the bytes.
    @Test func aMessageWithAnAttachmentIsDeliveredWithItsMetadata() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, _) = try await WebhookScene.make(port: app.port, path: "/hooks", receiver: receiver, events: ["message.created"])
        let interaction = try await scene.openInteraction()
        let file = AttachmentsTests.text(2000)
        let uploaded = try await AttachmentsTests.uploaded(app, interaction, token: scene.customer, bytes: file, filename: "form.txt")
        let id = try #require(uploaded["id"] as? String)
        let sent = try await scene.call("POST", "/v1/interactions/\(interaction)/messages", token: scene.customer,
                                        body: #"{"attachment_ids":["\#(id)"]}"#)
        #expect(sent.status == 201)
        #expect(await eventually { (try? await receiver.deliveries().count) == 1 })
        let data = try #require(try await receiver.deliveries().first?.data)
        let attachments = try #require(data["attachments"] as? [[String: Any]])
        #expect(attachments.count == 1)
        #expect(attachments.first?["id"] as? String == id && attachments.first?["filename"] as? String == "form.txt")
        #expect(attachments.first?["size"] as? Int == 2000 && attachments.first?["sha256"] as? String == uploaded["sha256"] as? String)
        #expect(data["text"] as? String == "")
        await app.stop()
    }

    @Test func endpointsAreManagedByAPIKeyAndListedByTheOperator() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/crud", receiver: receiver,
                                                            events: ["message.created"])
        let id = endpoint["id"] as? String ?? ""
        #expect((endpoint["secret"] as? String)?.hasPrefix("whsec_") == true)
        #expect(endpoint["disabled"] as? Bool == false && endpoint["disabled_reason"] is NSNull)
        let shown = try await scene.call("GET", "/v1/webhooks/endpoints/\(id)").json()
        #expect(shown["secret"] == nil && shown["events"] as? [String] == ["message.created"])
        let listed = try await scene.call("GET", "/v1/webhooks/endpoints?limit=1").json()
        #expect((listed["items"] as? [[String: Any]])?.count == 1 && listed["has_more"] as? Bool == false)
        let patched = try await scene.call("PATCH", "/v1/webhooks/endpoints/\(id)",
                                           body: #"{"events":["message.created","interaction.ended"],"disabled":true}"#).json()
        #expect(patched["events"] as? [String] == ["message.created", "interaction.ended"])
        #expect(patched["disabled"] as? Bool == true && patched["disabled_reason"] as? String == "disabled by the tenant")
        let enabled = try await scene.call("PATCH", "/v1/webhooks/endpoints/\(id)", body: #"{"disabled":false}"#).json()
        #expect(enabled["disabled"] as? Bool == false && enabled["disabled_reason"] is NSNull)
        let rotated = try await scene.call("POST", "/v1/webhooks/endpoints/\(id)/rotate-secret").json()
        #expect((rotated["secret"] as? String)?.hasPrefix("whsec_") == true && rotated["secret"] as? String != endpoint["secret"] as? String)
        #expect(rotated["previous_secret_expires_at"] is String)
        // The operator sees the tenant's endpoints.
        let admin = try await request(port: app.port, "GET", "/v1/admin/tenants/\(scene.tenantID)/webhooks/endpoints",
                                      headers: ["Authorization": "Bearer \(TestApp.adminToken)"])
        let adminItems = try admin.json()["items"] as? [[String: Any]]
        #expect(admin.status == 200 && adminItems?.first?["id"] as? String == id)
        // Errors: bad input, wrong credential, other tenant, unknown ids.
        #expect(try await scene.call("POST", "/v1/webhooks/endpoints", body: #"{"url":"ftp://x/","events":["message.created"]}"#).status == 400)
        #expect(try await scene.call("POST", "/v1/webhooks/endpoints", body: #"{"url":"https://example.com/","events":["nope"]}"#).status == 400)
        #expect(try await scene.call("POST", "/v1/webhooks/endpoints", body: #"{"url":"https://example.com/","events":[]}"#).status == 400)
        #expect(try await scene.call("PATCH", "/v1/webhooks/endpoints/\(id)", body: "{}").status == 400)
        #expect(try await scene.call("GET", "/v1/webhooks/endpoints", token: scene.agent).status == 401)
        let other = try await app.createTenant("Other")
        #expect(try await request(port: app.port, "GET", "/v1/webhooks/endpoints/\(id)",
                                  headers: ["Authorization": "Bearer \(other.apiKey)"]).status == 404)
        #expect(try await scene.call("GET", "/v1/webhooks/endpoints/not-a-uuid").status == 404)
        #expect(try await scene.call("POST", "/v1/webhooks/messages/msg_nope/redeliver").status == 404)
        #expect(try await scene.call("DELETE", "/v1/webhooks/endpoints/\(id)").status == 204)
        #expect(try await scene.call("DELETE", "/v1/webhooks/endpoints/\(id)").status == 404)
        #expect(try await scene.call("GET", "/v1/webhooks/endpoints/\(id)/attempts").status == 404)
        await app.stop()
    }

    @Test func deliveriesArriveAfterTheReceiverRecoversWithTheSameWebhookID() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        try await receiver.setMode("fail", for: "/down")
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/down", receiver: receiver,
                                                            events: ["message.created"])
        let interaction = try await scene.openInteraction()
        _ = try await scene.post("first", to: interaction, as: scene.customer)
        _ = try await scene.post("second", to: interaction, as: scene.agent)
        #expect(await eventually { (try? await receiver.deliveries().count) ?? 0 >= 3 })
        try await receiver.setMode("ok", for: "/down")
        #expect(await eventually(timeout: .seconds(20)) {
            let attempts = (try? await scene.attempts(of: endpoint["id"] as? String ?? "")) ?? []
            return attempts.filter { $0["outcome"] as? String == "delivered" }.count == 2
        })
        let deliveries = try await receiver.deliveries()
        let ids = deliveries.map(\.webhookID)
        // Until the first is delivered the second waits (order per interaction), then each arrives once more at most.
        let first = ids[0]
        let firstTimes = deliveries.filter { $0.webhookID == first }.map(\.receivedAt)
        #expect(firstTimes.count >= 3)
        #expect(Set(ids).count == 2)
        #expect(ids.firstIndex { $0 != first }! >= firstTimes.count, "the second message was attempted before the first was delivered")
        #expect(deliveries.allSatisfy { $0.verifiedWith == [0] })
        // Backoff: the gaps grow with the schedule (1 s, 1 s, 2 s, ±20 %).
        let gaps = zip(firstTimes.dropFirst(), firstTimes).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 0.75 }, "gaps \(gaps)")
        let attempts = try await scene.attempts(of: endpoint["id"] as? String ?? "")
        let failed = attempts.filter { $0["outcome"] as? String == "http_error" }
        #expect(failed.count >= 2 && failed.allSatisfy { $0["response_status"] as? Int == 500 && $0["error"] is String })
        let numbers = attempts.filter { $0["webhook_id"] as? String == first }.compactMap { $0["attempt"] as? Int }.sorted()
        #expect(numbers == Array(1 ... numbers.count))
        await app.stop()
    }

    @Test func aRolledBackWriteDeliversNothingAndACommittedOneIsDelivered() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, _) = try await WebhookScene.make(port: app.port, path: "/tx", receiver: receiver, events: ["message.created"])
        let interaction = try await scene.openInteraction()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: app.database.url), maxConnections: 1)
        let principal = Principal(tenantID: UUID(uuidString: scene.tenantID)!,
                                  credential: .session(sessionID: UUID(), userID: "a-1", role: .agent))
        struct Abandon: Error {}
        await #expect(throws: Abandon.self) {
            try await pool.withTransaction { connection in
                _ = try await InteractionStore().addMessage("never", from: principal, to: UUID(uuidString: interaction)!, on: connection)
                let queued = try await connection.query("SELECT count(*)::bigint AS n FROM webhook_messages")
                #expect(try queued[0].decode("n", as: Int64.self) == 1) // in the outbox, inside the transaction
                throw Abandon()
            }
        }
        _ = try await pool.withTransaction { connection in
            try await InteractionStore().addMessage("kept", from: principal, to: UUID(uuidString: interaction)!, on: connection)
        }
        await pool.close()
        #expect(await eventually { (try? await receiver.deliveries().count) == 1 })
        try await Task.sleep(for: .seconds(1))
        let deliveries = try await receiver.deliveries()
        #expect(deliveries.count == 1 && deliveries.first?.data["text"] as? String == "kept")
        let rows = try await app.database.query("SELECT count(*)::bigint AS n FROM webhook_messages")
        #expect(try rows[0].decode("n", as: Int64.self) == 1)
        await app.stop()
    }

    @Test func assignmentAndReadEventsMapToTheirTypes() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, _) = try await WebhookScene.make(port: app.port, path: "/kinds", receiver: receiver,
                                                     events: ["interaction.assigned", "interaction.read"])
        let interaction = try await scene.openInteraction()
        // The kinds another change adds; the trigger takes them whatever the CHECK says, so widen it here.
        _ = try await app.database.query("ALTER TABLE interaction_events DROP CONSTRAINT IF EXISTS interaction_events_kind_check")
        for (kind, payload) in [("assignment", #"{"assigned_agent_id":"a-1","previous_agent_id":null,"by":"a-0"}"#),
                                ("read", #"{"reader_id":"c-1","reader_role":"customer","read_through":1}"#)] {
            _ = try await app.database.query("""
                WITH next AS (UPDATE interactions SET last_seq = last_seq + 1 WHERE id = $1::uuid RETURNING last_seq)
                INSERT INTO interaction_events (interaction_id, seq, kind, payload) SELECT $1::uuid, last_seq, $2, $3::jsonb FROM next
                """, [interaction, kind, payload])
        }
        #expect(await eventually { (try? await receiver.deliveries().count) == 2 })
        let deliveries = try await receiver.deliveries()
        #expect(deliveries.map(\.type) == ["interaction.assigned", "interaction.read"])
        #expect(deliveries[0].data["assigned_agent_id"] as? String == "a-1" && deliveries[0].data["seq"] as? Int == 2)
        #expect(deliveries[1].data["reader_role"] as? String == "customer" && deliveries[1].data["read_through"] as? Int == 1)
        #expect(deliveries.allSatisfy { $0.verifiedWith == [0] && $0.data["event_id"] is String })
        await app.stop()
    }

    @Test func duringARotationBothSecretsVerify() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/rot", receiver: receiver, events: ["message.created"])
        let old = endpoint["secret"] as? String ?? ""
        let rotated = try await scene.call("POST", "/v1/webhooks/endpoints/\(endpoint["id"] as? String ?? "")/rotate-secret")
        #expect(rotated.status == 200)
        let new = try rotated.json()["secret"] as? String ?? ""
        try await receiver.setSecrets([old, new, WebhookSecret.generate().text])
        let interaction = try await scene.openInteraction()
        _ = try await scene.post("hello", to: interaction, as: scene.customer)
        #expect(await eventually { (try? await receiver.deliveries().count) == 1 })
        let delivery = try #require(try await receiver.deliveries().first)
        #expect(delivery.verifiedWith == [0, 1], "the old and the new secret each verify; a stranger's does not")
        #expect(delivery.signature.split(separator: " ").count == 2)
        await app.stop()
    }

    @Test func goneDisablesAndReenablingResumes() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        try await receiver.setMode("gone", for: "/gone")
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/gone", receiver: receiver, events: ["message.created"])
        let id = endpoint["id"] as? String ?? ""
        let interaction = try await scene.openInteraction()
        _ = try await scene.post("hello", to: interaction, as: scene.customer)
        #expect(await eventually {
            (try? await scene.call("GET", "/v1/webhooks/endpoints/\(id)").json()["disabled"] as? Bool) == true
        })
        let shown = try await scene.call("GET", "/v1/webhooks/endpoints/\(id)").json()
        #expect((shown["disabled_reason"] as? String)?.contains("410 Gone") == true)
        try await Task.sleep(for: .seconds(2))
        #expect(try await receiver.deliveries().count == 1, "no attempt while disabled")
        #expect(try await scene.attempts(of: id).first?["outcome"] as? String == "gone")
        try await receiver.setMode("ok", for: "/gone")
        #expect(try await scene.call("PATCH", "/v1/webhooks/endpoints/\(id)", body: #"{"disabled":false}"#).status == 200)
        #expect(await eventually { (try? await receiver.deliveries().count) == 2 })
        let deliveries = try await receiver.deliveries()
        #expect(deliveries[0].webhookID == deliveries[1].webhookID)
        // Redelivery sends the same message again, with the same webhook-id.
        let redelivered = try await scene.call("POST", "/v1/webhooks/messages/\(deliveries[0].webhookID)/redeliver")
        #expect(redelivered.status == 202)
        #expect(await eventually { (try? await receiver.deliveries().count) == 3 })
        #expect(try await receiver.deliveries().last?.webhookID == deliveries[0].webhookID)
        await app.stop()
    }

    @Test func anEndpointFailingForAWholeScheduleIsDisabledWithAReason() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        try await receiver.setMode("fail", for: "/dead")
        var settings = fastWebhooks
        settings.retrySchedule = [1, 1]
        let app = try await TestApp.start(webhooks: settings)
        let (scene, endpoint) = try await WebhookScene.make(port: app.port, path: "/dead", receiver: receiver, events: ["message.created"])
        let id = endpoint["id"] as? String ?? ""
        let interaction = try await scene.openInteraction()
        _ = try await scene.post("hello", to: interaction, as: scene.customer)
        #expect(await eventually {
            (try? await scene.call("GET", "/v1/webhooks/endpoints/\(id)").json()["disabled"] as? Bool) == true
        })
        let reason = try await scene.call("GET", "/v1/webhooks/endpoints/\(id)").json()["disabled_reason"] as? String ?? ""
        #expect(reason.contains("Every delivery failed") && reason.contains("3 attempts") && reason.contains("500"))
        #expect(try await receiver.deliveries().count == 3)
        await app.stop()
    }

    @Test func retryAfterIsHonoured() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        try await receiver.setMode("retry-after:3", for: "/busy")
        let app = try await TestApp.start(webhooks: fastWebhooks)
        let (scene, _) = try await WebhookScene.make(port: app.port, path: "/busy", receiver: receiver, events: ["message.created"])
        let interaction = try await scene.openInteraction()
        _ = try await scene.post("hello", to: interaction, as: scene.customer)
        #expect(await eventually { (try? await receiver.deliveries().count) == 1 })
        try await receiver.setMode("ok", for: "/busy")
        #expect(await eventually { (try? await receiver.deliveries().count) == 2 })
        let times = try await receiver.deliveries().map(\.receivedAt)
        #expect(times[1] - times[0] >= 2.9, "retried after \(times[1] - times[0]) s, not after Retry-After's 3 s")
        await app.stop()
    }

    @Test func privateTargetsAreRefusedAtRegistrationAndOnWhatNamesResolveTo() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        var settings = fastWebhooks
        settings.allowPrivateTargets = false
        let app = try await TestApp.start(webhooks: settings)
        let tenant = try await app.createTenant()
        let auth = ["Authorization": "Bearer \(tenant.apiKey)"]
        for url in ["http://127.0.0.1:\(receiver.port)/x", "http://[::1]/x", "http://10.0.0.1/x", "http://169.254.169.254/latest",
                    "http://0.0.0.0/", "http://[fd00::1]/"] {
            let refused = try await request(port: app.port, "POST", "/v1/webhooks/endpoints", headers: auth,
                                            body: #"{"url":"\#(url)","events":["message.created"]}"#)
            #expect(refused.status == 400, "\(url) was accepted")
            #expect(try refused.json()["parameter"] as? String == "url")
        }
        // Names that always mean this machine are refused at once, with the local-development setting named.
        for url in ["http://localhost:\(receiver.port)/x", "http://LocalHost./x", "http://api.localhost/x"] {
            let refused = try await request(port: app.port, "POST", "/v1/webhooks/endpoints", headers: auth,
                                            body: #"{"url":"\#(url)","events":["message.created"]}"#)
            #expect(refused.status == 400, "\(url) was accepted")
            let detail = try refused.json()["detail"] as? String ?? ""
            #expect(detail.contains("names this machine") && detail.contains("WEBHOOK_ALLOW_PRIVATE_TARGETS=1"), "\(detail)")
        }
        // Any other name is taken, but refused at delivery when it resolves to a private address (it may resolve
        // elsewhere by then: DNS rebinding): nothing reaches the receiver. The machine's own name resolves to one.
        var name = [CChar](repeating: 0, count: 256)
        #expect(gethostname(&name, name.count) == 0)
        let hostName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let resolved = try TargetAddress.resolve(hostName)
        try #require(!resolved.isEmpty && resolved.allSatisfy { !$0.isPublic }, "\(hostName) resolves to \(resolved)")
        let created = try await request(port: app.port, "POST", "/v1/webhooks/endpoints", headers: auth,
                                        body: #"{"url":"http://\#(hostName):\#(receiver.port)/named","events":["interaction.started"]}"#)
        #expect(created.status == 201)
        let id = try created.json()["id"] as? String ?? ""
        let customer = try await app.createSession(apiKey: tenant.apiKey, user: "c-1")
        #expect(try await app.call("POST", "/v1/interactions", token: customer, body: "{}").status == 201)
        let attempts = { try await request(port: app.port, "GET", "/v1/webhooks/endpoints/\(id)/attempts", headers: auth)
            .json()["items"] as? [[String: Any]] ?? [] }
        #expect(await eventually { ((try? await attempts()) ?? []).count >= 1 })
        let attempt = try #require(try await attempts().last)
        #expect(attempt["outcome"] as? String == "refused")
        #expect((attempt["error"] as? String)?.contains("\(hostName) resolves to \(resolved[0].text)") == true, "\(attempt)")
        #expect(try await receiver.deliveries().isEmpty)
        await app.stop()
    }

    @Test func anIdleWorkerClaimsOncePerPollInterval() async throws {
        let app = try await TestApp.start(webhooks: fastWebhooks) // polls every 200 ms
        func claims() async throws -> Int {
            let text = try await app.metrics().text
            return ["found", "empty"].reduce(0) { total, result in
                let prefix = #"switchboard_webhook_claims_total{result="\#(result)"} "#
                let line = text.split(separator: "\n").first { $0.hasPrefix(prefix) } ?? ""
                return total + (Int(line.dropFirst(prefix.count)) ?? 0)
            }
        }
        #expect(await eventually { ((try? await claims()) ?? 0) > 0 }) // the worker runs
        let before = try await claims()
        let started = ContinuousClock.now
        try await Task.sleep(for: .seconds(2))
        let made = try await claims() - before
        let polls = Int(((ContinuousClock.now - started) / .milliseconds(200)).rounded(.up))
        // Nothing to do: one claim per poll (plus one for a wait that ends as the window opens), not a claim loop
        // woken by its own timers.
        #expect(made <= polls + 1, "\(made) claims in \(polls) poll intervals")
        await app.stop()
    }

    @Test func messagesWaitingBehindADeliveryGoOutWhenItIsRecordedNotAtThePoll() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        // A poll that never comes during the test: only notices and recorded deliveries can wake the worker.
        var settings = fastWebhooks
        settings.pollInterval = .seconds(600)
        let app = try await TestApp.start(webhooks: settings)
        let (scene, _) = try await WebhookScene.make(port: app.port, path: "/queue", receiver: receiver, events: ["message.created"])
        let interaction = try await scene.openInteraction()
        // Twenty events committed at once queue behind each other: one notice burst, then each waits for the one
        // before it to be recorded.
        _ = try await app.database.query("""
            WITH next AS (UPDATE interactions SET last_seq = last_seq + 20 WHERE id = $1::uuid RETURNING last_seq)
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT $1::uuid, last_seq - 20 + n, 'message', jsonb_build_object('id', gen_random_uuid(), 'text', 'm' || n,
                   'sender_id', 'a-1', 'sender_role', 'agent')
            FROM next, generate_series(1, 20) AS n
            """, [interaction])
        #expect(await eventually(timeout: .seconds(20)) { (try? await receiver.deliveries().count) ?? 0 >= 20 })
        let seqs = try await receiver.deliveries().compactMap { $0.data["seq"] as? Int }
        #expect(seqs == Array(2 ... 21), "in event order, each once")
        await app.stop()
    }

    @Test func twoReplicasDeliverEachMessageOncePerAttempt() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let first = try await TestApp.start(webhooks: fastWebhooks)
        let second = try await TestApp.start(database: first.database, webhooks: fastWebhooks)
        let (scene, endpoint) = try await WebhookScene.make(port: first.port, path: "/two", receiver: receiver, events: ["message.created"])
        let interactions = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0 ..< 4 { group.addTask { try await scene.openInteraction() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Messages posted on both replicas at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, interaction) in interactions.enumerated() {
                let port = index % 2 == 0 ? first.port : second.port
                let replica = WebhookScene(port: port, tenantID: scene.tenantID, apiKey: scene.apiKey, customer: scene.customer, agent: scene.agent)
                group.addTask { for n in 0 ..< 10 { _ = try await replica.post("m\(n)", to: interaction, as: scene.customer) } }
            }
            try await group.waitForAll()
        }
        #expect(await eventually(timeout: .seconds(30)) { (try? await receiver.deliveries().count) ?? 0 >= 40 })
        try await Task.sleep(for: .seconds(1))
        let deliveries = try await receiver.deliveries()
        #expect(deliveries.count == 40)
        #expect(Set(deliveries.map(\.webhookID)).count == 40, "a message was delivered twice")
        // Per interaction, in event order.
        for interaction in interactions {
            let seqs = deliveries.filter { $0.data["interaction_id"] as? String == interaction }.compactMap { $0.data["seq"] as? Int }
            #expect(seqs == seqs.sorted() && seqs.count == 10)
        }
        // One attempt each in the attempt log, as the API lists it.
        let attempts = try await scene.attempts(of: endpoint["id"] as? String ?? "")
        #expect(attempts.count == 40 && Set(attempts.compactMap { $0["webhook_id"] as? String }).count == 40)
        await second.stopKeepingDatabase()
        await first.stop()
    }
}

@Suite("Webhooks across processes", .timeLimit(.minutes(10)))
struct WebhookDeliveryAcrossProcesses {
    /// A replica killed with SIGKILL while its attempt hangs leaves a lease; once it runs out, another replica
    /// delivers the message, with the same webhook-id.
    @Test func aReplicaKilledMidDeliveryLosesNoMessageAcrossProcesses() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        try await receiver.setMode("hang", for: "/slow")
        let database = try await TestDatabase.create()
        let replica = try await SignalTests.launch(extra: [
            "DATABASE_URL": database.url, "SWITCHBOARD_ADMIN_TOKEN": TestApp.adminToken, "RATE_LIMIT_PER_MINUTE": "0",
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "1", "WEBHOOK_TIMEOUT_SECONDS": "2", "WEBHOOK_RETRY_SCHEDULE": "1,1,1",
        ])
        #expect(await eventually(timeout: .seconds(20)) { (try? await request(port: replica.port, "GET", "/readyz").status) == 200 })
        let (scene, _) = try await WebhookScene.make(port: replica.port, path: "/slow", receiver: receiver, events: ["message.created"])
        let interaction = try await scene.openInteraction()
        _ = try await scene.post("hello", to: interaction, as: scene.customer)
        #expect(await eventually { (try? await receiver.deliveries().count) == 1 })
        replica.child.signal(SIGKILL)
        _ = try await onThread { replica.child.wait() }
        try await receiver.setMode("ok", for: "/slow")
        let survivor = try await TestApp.start(database: database, webhooks: fastWebhooks)
        #expect(await eventually(timeout: .seconds(30)) {
            let rows = try? await database.query("SELECT status FROM webhook_messages")
            return (try? rows?.first?.decode("status", as: String.self)) == "delivered"
        })
        let deliveries = try await receiver.deliveries()
        #expect(deliveries.count >= 2 && Set(deliveries.map(\.webhookID)).count == 1)
        #expect(deliveries.allSatisfy { $0.verifiedWith == [0] })
        await survivor.stop()
    }
}
