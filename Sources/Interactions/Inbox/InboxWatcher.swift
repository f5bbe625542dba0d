import Coordination
import Foundation
import HTTPServer

/// One inbox stream's side of the feed: the events waiting for its writer (coalesced per interaction), what its
/// client shows, and how it ends. The dispatcher offers it every batch of its tenant's changes; the stream's body
/// takes what waits whenever it is woken.
final class InboxWatcher: Sendable {
    let id: UInt64
    let tenant: UUID
    let agent: String
    let filter: InboxFilter
    /// Most interactions waiting before the stream is ended (its client resumes from its last id): far more than
    /// any one screen shows, so only a client that stopped reading meets it.
    static let waitingLimit = 20_000

    private struct State {
        var queue = InboxQueue<Waiting>()
        var view: InboxView
        var heartbeatDue = false
        /// The last event, once the stream must end (`reconnect`).
        var ending: [UInt8]?
    }

    /// Guards what waits for the writer and the client's view.
    private let state: Locked<State>
    /// Wakes the writer; finished when the stream must end.
    let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(id: UInt64, tenant: UUID, agent: String, filter: InboxFilter, view: InboxView) {
        self.id = id
        self.tenant = tenant
        self.agent = agent
        self.filter = filter
        state = Locked(State(view: view))
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// What waits in the queue: an interaction's latest summary (one per interaction), or a note (each its own).
    enum Waiting: Hashable {
        case interaction(UUID)
        case note(UUID, Int64)
        /// An agent's latest status (not stored: no id).
        case status(String)
    }

    /// Offers a batch of the tenant's changes, in order, each rendered by `renderer` (the last one this stream
    /// takes of the batch carries the position of the batch's end).
    func offer(_ changes: [InboxStore.Change], renderer: InboxBatchRenderer) {
        let agent = self.agent, filter = self.filter
        var overflow = false
        state.withLock { state in
            guard state.ending == nil else { return }
            var taken: [(index: Int, inView: Bool)] = []
            for (index, change) in changes.enumerated() {
                switch change.item {
                case .interaction(let summary):
                    let matches = filter.includes(state: summary.state, assignee: summary.assignedAgentID, agent: agent)
                    switch state.view.decide(summary.id.lowercased, matches: matches) {
                    case .show: taken.append((index, true))
                    case .remove: taken.append((index, false))
                    case .skip: continue
                    }
                case .note(let note):
                    // A note goes where its interaction is in view.
                    if filter.includes(state: note.state, assignee: note.assignedAgentID, agent: agent) { taken.append((index, true)) }
                }
            }
            for (number, (index, inView)) in taken.enumerated() {
                let isLast = number == taken.count - 1
                switch changes[index].item {
                case .interaction(let summary):
                    let event = renderer.event(index, isLast: isLast, unread: summary.unreadCount(for: agent), inView: inView)
                    state.queue.put(.interaction(summary.id), event)
                case .note(let note):
                    let event = renderer.event(index, isLast: isLast, unread: 0, inView: true)
                    state.queue.put(.note(note.interactionID, note.note.noteSeq), event)
                }
            }
            overflow = state.queue.count > InboxWatcher.waitingLimit
        }
        if overflow { end(reason: "lagging") } else { wake.yield() }
    }

    /// Queues an event that has no position (an agent's status), replacing the one waiting under `key`.
    func say(_ event: [UInt8], key: Waiting) {
        state.withLock { state in if state.ending == nil { state.queue.put(key, event) } }
        wake.yield()
    }

    /// An `agent.status` event (no id: a client that missed it asks `GET /v1/agents`).
    static func statusEvent(_ change: AgentStatusChange) -> [UInt8] {
        let body = ["agent_id": change.agentID, "status": change.status.rawValue]
        let data = (try? JSON.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ServerSentEvent(event: "agent.status", data: data).encoded()
    }

    /// Asks for a keep-alive comment, if nothing else is written first.
    func heartbeat() {
        state.withLock { $0.heartbeatDue = true }
        wake.yield()
    }

    /// Ends the stream after what waits, with a `reconnect` event saying why (the client resumes from its last id).
    func end(reason: String) {
        let ending = ServerSentEvent(event: "reconnect", data: #"{"reason":"\#(reason)"}"#).encoded()
        state.withLock { state in if state.ending == nil { state.ending = ending } }
        wake.yield()
        wake.finish()
    }

    /// What waits, as bytes to write (nil: nothing), and whether the stream is over after it.
    func take() -> (bytes: [UInt8]?, over: Bool) {
        state.withLock { state in
            var bytes: [UInt8] = []
            for event in state.queue.takeAll() { bytes += event }
            if let ending = state.ending {
                bytes += ending
            } else if bytes.isEmpty && state.heartbeatDue {
                bytes = ServerSentEvent.comment("heartbeat")
            }
            state.heartbeatDue = false
            return (bytes.isEmpty ? nil : bytes, state.ending != nil)
        }
    }

    /// A `note` event with `id`.
    static func event(_ note: InboxNote, id: String?) -> [UInt8] {
        let body = InboxNote.Event(interactionID: note.interactionID.lowercased, note: note.note)
        let data = (try? JSON.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ServerSentEvent(id: id, event: "note", data: data).encoded()
    }

    /// An `interaction` event with `id`.
    static func event(_ entry: InboxEntry, id: String?) -> [UInt8] {
        let data = String(decoding: entry.jsonBytes(capacity: 512), as: UTF8.self)
        return ServerSentEvent(id: id, event: "interaction", data: data).encoded()
    }
}
