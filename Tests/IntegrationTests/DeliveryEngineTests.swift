import CCurl
import Coordination
import Foundation
import Testing
import TestSupport
@testable import Webhooks

/// The delivery engine carries many POSTs at once on its one thread: a POST that hangs holds up none of the others
/// and ends at its own timeout, a refused connection ends at once, each POST is reported exactly once, and the
/// thread ends when stopped and starts again for the next POST.
@Suite("Delivery engine", .serialized, .timeLimit(.minutes(5)))
struct DeliveryEngineTests {
    /// What one POST came to, and when (seconds after the first was started).
    private struct Outcome: Sendable {
        let path: String
        let code: Int32
        let status: Int
        let at: Double
    }

    @Test func aHangingPostHoldsUpNoneOfTheOthersAndEachEndsOnce() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        try await receiver.setMode("hang", for: "/slow")
        let engine = DeliveryEngine()
        let outcomes = Locked([Outcome]())
        let start = Date()
        let (listener, closedPort) = Loopback.listener()
        close(listener) // nothing listens there now: refused
        func post(_ url: String, path: String, timeout: Int) {
            engine.start(DeliveryEngine.Post(
                url: url, resolve: nil, headers: ["Content-Type: application/json", "webhook-id: msg_\(path)"],
                body: Array(#"{"n":1}"#.utf8), timeoutMilliseconds: timeout) { result in
                    let outcome = Outcome(path: path, code: result.curl_code, status: result.status,
                                          at: Date().timeIntervalSince(start))
                    outcomes.withLock { $0.append(outcome) }
                })
        }
        post(receiver.url("/slow"), path: "slow", timeout: 1500)
        post("http://127.0.0.1:\(closedPort)/closed", path: "closed", timeout: 10_000)
        for n in 0 ..< 30 { post(receiver.url("/fast"), path: "fast-\(n)", timeout: 10_000) }

        #expect(await eventually(timeout: .seconds(20)) { outcomes.withLock { $0.count } == 32 })
        try await Task.sleep(for: .milliseconds(200)) // nothing is reported twice
        let seen = outcomes.withLock { $0 }
        #expect(seen.count == 32 && Set(seen.map(\.path)).count == 32)
        let slow = try #require(seen.first { $0.path == "slow" })
        let closed = try #require(seen.first { $0.path == "closed" })
        let fast = seen.filter { $0.path.hasPrefix("fast-") }
        #expect(slow.code == 28 && slow.at >= 1.4, "the hanging POST ended with curl code \(slow.code) after \(slow.at) s")
        #expect(closed.code != 0 && closed.code != 28 && closed.at < slow.at)
        #expect(fast.allSatisfy { $0.code == 0 && $0.status == 200 && $0.at < slow.at },
                "a POST waited for the hanging one: \(fast.map { ($0.code, $0.status, $0.at) })")
        #expect(try await receiver.deliveries(to: "/fast").count == 30)

        engine.stop()
        #expect(await eventually { !engine.isRunning })
        // A POST after the thread ended starts it again.
        post(receiver.url("/fast"), path: "again", timeout: 10_000)
        #expect(await eventually { outcomes.withLock { $0.contains { $0.path == "again" && $0.status == 200 } } })
        engine.stop()
        #expect(await eventually { !engine.isRunning })
    }

    /// Bursts of 16 POSTs, each followed by a single one (as a burst thins out), go over the connections the first
    /// burst opened: the engine keeps them while fewer POSTs are in flight, instead of closing all but four per POST
    /// in flight and opening them again for the next burst.
    @Test func connectionsOutliveABurstThinningOut() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let engine = DeliveryEngine()
        defer { engine.stop() }
        let finished = Locked(0)
        func post(_ n: Int) {
            engine.start(DeliveryEngine.Post(
                url: receiver.url("/kept"), resolve: nil, headers: ["Content-Type: application/json"],
                body: Array(#"{"n":\#(n)}"#.utf8), timeoutMilliseconds: 10_000) { _ in finished.withLock { $0 += 1 } })
        }
        var sent = 0
        for _ in 0 ..< 5 {
            for _ in 0 ..< 16 { post(sent); sent += 1 }
            #expect(await eventually(timeout: .seconds(20)) { finished.withLock { $0 } == sent })
            post(sent)
            sent += 1
            #expect(await eventually(timeout: .seconds(20)) { finished.withLock { $0 } == sent })
        }
        let deliveries = try await receiver.deliveries(to: "/kept")
        #expect(deliveries.count == sent)
        let connections = Set(deliveries.map(\.peerPort)).count
        #expect(connections <= 16, "\(connections) connections for \(sent) POSTs, at most 16 at once")
    }

    /// A task that prefers the engine runs on its thread: it starts its POSTs there and takes their answers there,
    /// many at once, each exactly once; after the thread ended, the task's next step starts it again.
    @Test func tasksThatPreferTheEngineRunOnItsThread() async throws {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        let engine = DeliveryEngine()
        defer { engine.stop() }
        // The thread's name as the kernel keeps it: its first 15 bytes.
        func onEngine() -> Bool { Thread.current.name == String("webhook-delivery".prefix(15)) }
        func post(_ n: Int) async -> Int {
            await withCheckedContinuation { continuation in
                engine.start(DeliveryEngine.Post(
                    url: receiver.url("/engine"), resolve: nil, headers: ["Content-Type: application/json"],
                    body: Array(#"{"n":\#(n)}"#.utf8), timeoutMilliseconds: 10_000) { continuation.resume(returning: $0.status) })
            }
        }
        let seen = await withTaskGroup(of: (Int, [Bool]).self) { group in
            for n in 0 ..< 20 {
                group.addTask(executorPreference: engine) {
                    let before = onEngine()
                    let status = await post(n)
                    return (status, [before, onEngine()])
                }
            }
            var seen: [(Int, [Bool])] = []
            for await outcome in group { seen.append(outcome) }
            return seen
        }
        #expect(seen.count == 20 && seen.allSatisfy { $0.0 == 200 })
        #expect(seen.allSatisfy { $0.1 == [true, true] }, "\(seen.map(\.1))")
        #expect(try await receiver.deliveries(to: "/engine").count == 20)

        engine.stop()
        #expect(await eventually { !engine.isRunning })
        let again = await Task(executorPreference: engine) { (await post(20), onEngine()) }.value
        #expect(again == (200, true))
    }

    /// curl's outcome maps to the attempt log's: a 2xx delivered, 410 gone, other answers an HTTP error with their
    /// `Retry-After`, curl's timeout a timeout, any other failure a network error with curl's message.
    @Test func curlsOutcomesMapToTheAttemptLogs() {
        func result(code: Int32 = 0, status: Int = 0, retryAfter: String = "", error: String = "") -> sb_http_result {
            var result = sb_http_result()
            result.curl_code = code
            result.status = status
            withUnsafeMutableBytes(of: &result.retry_after) { $0.copyBytes(from: Array(retryAfter.utf8)) }
            withUnsafeMutableBytes(of: &result.error) { $0.copyBytes(from: Array(error.utf8)) }
            return result
        }
        let latency = Duration.milliseconds(3)
        let delivered = WebhookPost.attemptResult(result(status: 204), timeoutMilliseconds: 100, latency: latency)
        #expect(delivered == AttemptResult(outcome: .delivered, status: 204, error: nil, retryAfterSeconds: nil, latency: latency))
        #expect(WebhookPost.attemptResult(result(status: 410), timeoutMilliseconds: 100, latency: latency).outcome == .gone)
        let busy = WebhookPost.attemptResult(result(status: 503, retryAfter: "7"), timeoutMilliseconds: 100, latency: latency)
        #expect(busy.outcome == .httpError && busy.status == 503 && busy.retryAfterSeconds == 7
                && busy.error == "the endpoint answered 503")
        let late = WebhookPost.attemptResult(result(code: 28), timeoutMilliseconds: 100, latency: latency)
        #expect(late.outcome == .timeout && late.error == "no answer within 100 ms" && late.status == nil)
        let refused = WebhookPost.attemptResult(result(code: 7, error: "Failed to connect"), timeoutMilliseconds: 100,
                                                latency: latency)
        #expect(refused.outcome == .networkError && refused.error == "Failed to connect")
    }
}
