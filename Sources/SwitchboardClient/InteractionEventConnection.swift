import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one SSE connection that feeds every subscriber of one interaction, kept alive until the interaction ends.
///
/// Each attempt sends the parser's last event id as `Last-Event-ID`, so the server replays what was missed; stored
/// events the subscribers already have (by `seq`) are skipped should a server ever resend them. Between attempts
/// it waits as ``EventStreamPolicy`` says, honouring the server's `retry:` and `Retry-After`. It stops for good —
/// finishing every subscriber's stream — when the interaction ends or fails, on 204, and on a refusal that a retry
/// cannot cure (400, 401, 403, 404…). Cancelling the task that runs ``run()`` closes the connection.
struct InteractionEventConnection: Sendable {
    let url: URL
    let tokenProvider: @Sendable () async throws -> String
    let configuration: URLSessionConfiguration
    let policy: EventStreamPolicy
    let registry: SubscriberRegistry<InteractionEvent>

    /// How one attempt ended.
    enum Outcome {
        /// Nothing more will come: the registry is finished.
        case over
        /// The connection dropped or was refused for now; `delivered` says whether it delivered any event.
        case dropped(delivered: Bool, retryAfter: Duration?)
    }

    /// Connects, reconnects and delivers until the stream is over or the task is cancelled.
    func run() async {
        var parser = EventStreamParser()
        var schedule = ReconnectSchedule(policy: policy)
        var lastSeq: Int64 = -1
        while !Task.isCancelled {
            let outcome = await attempt(&parser, &lastSeq)
            parser.finish()
            guard case .dropped(let delivered, let retryAfter) = outcome else { return }
            schedule.serverDelay = parser.retry.map { .milliseconds($0) }
            let delay = schedule.delay(afterAttemptThatDelivered: delivered, retryAfter: retryAfter,
                                       random: Double.random(in: 0 ..< 1))
            do { try await Task.sleep(for: delay) } catch { break }
        }
    }

    private func attempt(_ parser: inout EventStreamParser, _ lastSeq: inout Int64) async -> Outcome {
        var delivered = false
        do {
            var request = URLRequest(url: url, timeoutInterval: Self.idleTimeout(policy))
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.setValue("no-store", forHTTPHeaderField: "Cache-Control")
            request.setValue("Bearer \(try await tokenProvider())", forHTTPHeaderField: "Authorization")
            if let id = parser.lastEventID { request.setValue(id, forHTTPHeaderField: "Last-Event-ID") }
            var refusal: (status: Int, body: Data, retryAfter: Duration?)?
            for try await part in StreamingRequest.start(request, configuration: configuration) {
                switch part {
                case .head(let response) where response.statusCode == 204:
                    return finish()
                case .head(let response) where response.statusCode != 200:
                    let after = response.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) }
                    refusal = (response.statusCode, Data(), after.map { .seconds($0) })
                case .head:
                    continue
                case .bytes(let bytes) where refusal != nil:
                    refusal?.body.append(bytes)
                case .bytes(let bytes):
                    for event in parser.feed(bytes) {
                        guard let decoded = InteractionEvent(event) else { continue }
                        delivered = true
                        if let seq = decoded.seq {
                            if seq <= lastSeq { continue }
                            lastSeq = seq
                        }
                        if case .state(let change) = decoded {
                            registry.yield(decoded, retain: true)
                            if change.isFinal { return finish() }
                        } else {
                            registry.yield(decoded)
                        }
                    }
                }
            }
            if let refusal {
                if Self.isRetryable(refusal.status) { return .dropped(delivered: false, retryAfter: refusal.retryAfter) }
                registry.yield(.refused(SwitchboardClient.problemDetails(refusal.body, status: refusal.status)))
                return finish()
            }
        } catch {
            // A network failure, a timeout or cancellation: the loop decides whether to go on.
        }
        return .dropped(delivered: delivered, retryAfter: nil)
    }

    private func finish() -> Outcome {
        registry.finish()
        return .over
    }

    /// Statuses that may well succeed later: timeouts, rate limits and server-side trouble.
    static func isRetryable(_ status: Int) -> Bool {
        status == 408 || status == 429 || status >= 500
    }

    /// The policy's idle timeout in whole seconds, at least one (FoundationNetworking drops fractions, and a zero
    /// timeout would fire at once).
    static func idleTimeout(_ policy: EventStreamPolicy) -> TimeInterval {
        TimeInterval(max(1, policy.idleTimeout.components.seconds))
    }
}
