import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one SSE connection that feeds every subscriber of one interaction, kept alive until the interaction ends.
///
/// The first attempt starts where ``EventStreamStart`` says (by default `Last-Event-ID: 0`: the whole log).
/// Each attempt sends the parser's last event id as `Last-Event-ID`, so the server replays what was missed; stored
/// events the subscribers already have (by `seq`) are skipped should a server ever resend them. Between attempts
/// it waits as ``EventStreamPolicy`` says, honouring the server's `retry:` and `Retry-After`. It stops for good —
/// finishing every subscriber's stream — when the interaction ends or fails, on 204, and on a refusal that a retry
/// cannot cure (400, 403, 404…, and a 401 that a fresh token did not cure). Cancelling the task that runs ``run()``
/// closes the connection.
struct InteractionEventConnection: Sendable {
    let url: URL
    let tokenProvider: @Sendable () async throws -> String
    let configuration: URLSessionConfiguration
    let policy: EventStreamPolicy
    /// Where the first connection starts; later ones resume from the last event received.
    let start: EventStreamStart
    let registry: EventFanOut<InteractionEvent>
    /// Cuts the wait before the next attempt short (``SwitchboardClient/reconnectEventStreams()``).
    let nudge: ReconnectNudge

    /// How one attempt ended.
    enum Outcome {
        /// Nothing more will come: the registry is finished.
        case over
        /// The connection dropped or was refused for now; `delivered` says whether it delivered any event.
        case dropped(delivered: Bool, retryAfter: Duration?)
        /// Try again at once: after a 401, with whatever token the provider gives now; after the server said the
        /// last event id is beyond its log (a restored database, say), from a snapshot.
        case again
    }

    /// What the loop knows across attempts.
    struct Progress {
        var parser = EventStreamParser()
        /// The highest `seq` delivered to the subscribers.
        var lastSeq: Int64 = -1
        /// The latest state delivered, for subscribers that join later.
        var state: InteractionEvent.StateChange?
        /// The previous attempt was refused with 401; another 401 (with a fresh token) is final.
        var unauthorized = false
    }

    /// The most of an error response's body kept for its problem details.
    static let problemBodyLimit = 16 * 1024

    /// Connects, reconnects and delivers until the stream is over or the task is cancelled.
    func run() async {
        var progress = Progress(parser: EventStreamParser(lastEventID: start.lastEventID))
        var schedule = ReconnectSchedule(policy: policy)
        while !Task.isCancelled {
            let outcome = await attempt(&progress)
            progress.parser.finish()
            if case .again = outcome { continue }
            guard case .dropped(let delivered, let retryAfter) = outcome else { return }
            schedule.serverDelay = progress.parser.retry.map { .milliseconds($0) }
            let delay = schedule.delay(afterAttemptThatDelivered: delivered, retryAfter: retryAfter,
                                       random: Double.random(in: 0 ..< 1))
            await nudge.wait(delay)
        }
    }

    private func attempt(_ progress: inout Progress) async -> Outcome {
        var delivered = false
        do {
            let request = StreamRefusal.request(url, policy: policy, token: try await tokenProvider(),
                                                lastEventID: progress.parser.lastEventID)
            var refusal: (response: HTTPURLResponse, body: Data)?
            for try await part in StreamingRequest.start(request, configuration: configuration) {
                switch part {
                case .head(let response) where response.statusCode == 204:
                    return finish()
                case .head(let response) where response.statusCode != 200:
                    refusal = (response, Data())
                case .head:
                    progress.unauthorized = false
                case .bytes(let bytes) where refusal != nil:
                    let room = Self.problemBodyLimit - (refusal?.body.count ?? 0)
                    if room > 0 { refusal?.body.append(bytes.prefix(room)) }
                case .bytes(let bytes):
                    for event in progress.parser.feed(bytes) {
                        guard let decoded = InteractionEvent(event) else { continue }
                        delivered = true
                        if deliver(decoded, &progress) { return finish() }
                    }
                }
            }
            if let refusal { return refused(refusal.response, refusal.body, &progress) }
        } catch {
            // A network failure, a timeout, a token that could not be had, or cancellation: the loop decides.
        }
        return .dropped(delivered: delivered, retryAfter: nil)
    }

    /// Hands one event to the subscribers unless they already have it; returns whether it was the last one.
    private func deliver(_ event: InteractionEvent, _ progress: inout Progress) -> Bool {
        if let seq = event.seq {
            if seq <= progress.lastSeq { return false }
            progress.lastSeq = seq
        }
        guard case .state(let change) = event else {
            // A subscriber that joins after this event gets the state as of it, so it knows where its view starts:
            // set in the same step as the event goes out, or one joining in between would get neither.
            if let state = progress.state, event.seq != nil {
                registry.yield(event, retaining: .state(state.current(at: progress.lastSeq)))
            } else {
                registry.yield(event)
            }
            return false
        }
        progress.state = change
        registry.yield(event, retain: true)
        return change.isFinal
    }

    /// Handles an error answer: retry later, retry once with a fresh token, or give up and tell the subscribers.
    private func refused(_ response: HTTPURLResponse, _ body: Data, _ progress: inout Progress) -> Outcome {
        switch StreamRefusal.decide(response, body: body, unauthorizedBefore: progress.unauthorized,
                                    resuming: progress.parser.lastEventID != nil) {
        case .later(let retryAfter):
            return .dropped(delivered: false, retryAfter: retryAfter)
        case .freshToken:
            progress.unauthorized = true
            return .again
        case .startOver:
            // The server's log does not reach our position: start over from its current state.
            progress.parser = EventStreamParser()
            progress.lastSeq = -1
            return .again
        case .final(let problem):
            registry.yield(.refused(problem))
            return finish()
        }
    }

    private func finish() -> Outcome {
        registry.finish()
        return .over
    }

    /// The policy's idle timeout in whole seconds, at least one (FoundationNetworking drops fractions, and a zero
    /// timeout would fire at once).
    static func idleTimeout(_ policy: EventStreamPolicy) -> TimeInterval {
        TimeInterval(max(1, policy.idleTimeout.components.seconds))
    }
}

extension InteractionEvent.StateChange {
    /// This state as a snapshot current at `seq`: what a subscriber joining after later events receives.
    func current(at seq: Int64) -> InteractionEvent.StateChange {
        InteractionEvent.StateChange(seq: seq, state: state, failureReason: failureReason, subject: subject,
                                     isSnapshot: true, createdAt: nil)
    }
}
