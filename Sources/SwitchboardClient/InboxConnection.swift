import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connection behind one ``SwitchboardClient/inbox(assigned:states:)`` stream: it reconnects with the last id
/// it received (so each change arrives once, across dropped connections, restarts and token refreshes), waits as
/// ``EventStreamPolicy`` says between attempts, and starts over from a snapshot — announced by ``InboxEvent/reset``
/// — when the server cannot resume from that id. It stops on a refusal a retry cannot cure.
struct InboxConnection: Sendable {
    let url: URL
    let tokenProvider: @Sendable () async throws -> String
    let configuration: URLSessionConfiguration
    let policy: EventStreamPolicy
    let continuation: AsyncStream<InboxEvent>.Continuation

    /// What the loop knows across attempts.
    private struct Progress {
        var parser = EventStreamParser()
        /// Something was delivered already: a fresh snapshot must be announced with `reset`.
        var deliveredBefore = false
        var unauthorized = false
    }

    private enum Outcome { case over, again, dropped(delivered: Bool, retryAfter: Duration?) }

    /// Connects, reconnects and delivers until refused for good or cancelled.
    func run() async {
        var progress = Progress()
        var schedule = ReconnectSchedule(policy: policy)
        while !Task.isCancelled {
            let outcome = await attempt(&progress)
            progress.parser.finish()
            switch outcome {
            case .over:
                continuation.finish()
                return
            case .again:
                continue
            case .dropped(let delivered, let retryAfter):
                schedule.serverDelay = progress.parser.retry.map { .milliseconds($0) }
                try? await Task.sleep(for: schedule.delay(afterAttemptThatDelivered: delivered, retryAfter: retryAfter,
                                                          random: Double.random(in: 0 ..< 1)))
            }
        }
        continuation.finish()
    }

    private func attempt(_ progress: inout Progress) async -> Outcome {
        var delivered = false
        do {
            let resuming = progress.parser.lastEventID
            let request = StreamRefusal.request(url, policy: policy, token: try await tokenProvider(), lastEventID: resuming)
            var refusal: (response: HTTPURLResponse, body: Data)?
            for try await part in StreamingRequest.start(request, configuration: configuration) {
                switch part {
                case .head(let response) where response.statusCode != 200:
                    refusal = (response, Data())
                case .head:
                    progress.unauthorized = false
                    if resuming == nil && progress.deliveredBefore { continuation.yield(.reset) }
                case .bytes(let bytes) where refusal != nil:
                    refusal?.body.append(bytes.prefix(InteractionEventConnection.problemBodyLimit))
                case .bytes(let bytes):
                    for event in progress.parser.feed(bytes) {
                        guard let decoded = InboxEvent(event) else { continue }
                        delivered = true
                        progress.deliveredBefore = true
                        continuation.yield(decoded)
                    }
                }
            }
            if let refusal { return refused(refusal.response, refusal.body, &progress) }
        } catch {
            // A network failure, a timeout, a token that could not be had, or cancellation: the loop decides.
        }
        return .dropped(delivered: delivered, retryAfter: nil)
    }

    private func refused(_ response: HTTPURLResponse, _ body: Data, _ progress: inout Progress) -> Outcome {
        switch StreamRefusal.decide(response, body: body, unauthorizedBefore: progress.unauthorized,
                                    resuming: progress.parser.lastEventID != nil) {
        case .later(let retryAfter):
            return .dropped(delivered: false, retryAfter: retryAfter)
        case .freshToken:
            progress.unauthorized = true
            return .again
        case .startOver:
            progress.parser = EventStreamParser()
            return .again
        case .final(let problem):
            continuation.yield(.refused(problem))
            return .over
        }
    }
}

extension InboxEvent {
    /// The event an inbox stream's server-sent event stands for; nil for what is not one (a `reconnect`, which the
    /// connection answers by reconnecting, or an event it does not know).
    init?(_ event: ReceivedServerSentEvent) {
        let decoder = APIDecoding.decoder()
        let data = Data(event.data.utf8)
        switch event.event {
        case "interaction":
            guard let entry = try? decoder.decode(InboxEntry.self, from: data) else { return nil }
            self = .interaction(entry)
        case "snapshot-end":
            struct End: Decodable { let count: Int }
            guard let end = try? decoder.decode(End.self, from: data) else { return nil }
            self = .snapshotEnd(count: end.count)
        case "note":
            guard let note = try? decoder.decode(InboxNote.self, from: data) else { return nil }
            self = .note(note)
        case "agent.status":
            struct Status: Decodable {
                let agentID: String
                let status: AgentStatus
                enum CodingKeys: String, CodingKey { case status, agentID = "agent_id" }
            }
            guard let status = try? decoder.decode(Status.self, from: data) else { return nil }
            self = .agentStatus(agentID: status.agentID, status: status.status)
        default:
            return nil
        }
    }
}
