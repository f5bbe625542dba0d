import Foundation
import TestSupport

/// What one inbox connection of the checker's agent observed.
struct ObservedInboxConnection: Sendable {
    let lastEventID: String?
    let garbage: Bool
    let port: Int
    var status = 0
    var events: [ReceivedEvent] = []
}

/// Set once by the run when every writer is done; read by the inbox follower's thread.
final class WritersDone: @unchecked Sendable { // `done` is guarded by `lock`
    private let lock = NSLock()
    private var done = false
    func set() { lock.withLock { done = true } }
    var isSet: Bool { lock.withLock { done } }
}

extension StreamCheckRun {
    /// The agent's inbox (every state, any assignment) followed through random replicas, hanging up at random and
    /// resuming from the last id — sometimes sending garbage instead, which must be refused — until the writers are
    /// done and the stream has been quiet for a while. `started` is called once the first snapshot has ended.
    func followInbox(seed: UInt64, done: WritersDone, started: @escaping @Sendable () -> Void) -> [ObservedInboxConnection] {
        var rng = SplitMix64(seed: seed)
        var observed: [ObservedInboxConnection] = []
        var position: String?
        var announced = false
        var quietSince: Date?
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let garbage = position != nil && rng.next() % 10 == 0
            let lastEventID = garbage ? "not-a-position" : position
            let port = cluster.port(using: &rng)
            var connection = ObservedInboxConnection(lastEventID: lastEventID, garbage: garbage, port: port)
            guard let client = try? EventStreamClient(port: port, path: "/v1/inbox/events?state=started,ended,failed",
                                                      token: agent, lastEventID: lastEventID) else {
                observed.append(connection)
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            connection.status = client.status
            guard client.status == 200 else {
                client.socket.shutdownAndClose()
                observed.append(connection)
                continue
            }
            let budget = announced ? 1 + Int(rng.next() % 15) : Int.max
            while connection.events.count < budget {
                guard let events = try? client.events(1, timeout: announced ? 2 : 10), !events.isEmpty else {
                    if done.isSet {
                        quietSince = quietSince ?? Date()
                    }
                    break
                }
                quietSince = nil
                connection.events += events
                if !announced, events.contains(where: { $0.event == "snapshot-end" }) {
                    announced = true
                    started()
                    break
                }
                if client.ended { break }
            }
            client.socket.shutdownAndClose()
            if let last = connection.events.last(where: { $0.id != nil })?.id { position = last }
            observed.append(connection)
            if let quietSince, Date().timeIntervalSince(quietSince) > 3 { break }
            if !announced { Thread.sleep(forTimeInterval: 0.05) }
        }
        return observed
    }
}

/// The inbox's promise against the notes in Postgres: every note observed exactly once across the follower's
/// connections, none that is not stored, and every garbage position refused.
func inboxViolations(_ connections: [ObservedInboxConnection], notes stored: Set<String>) -> [String] {
    var problems: [String] = []
    var seen: [String: Int] = [:]
    for connection in connections {
        if connection.garbage && connection.status != 400 && connection.status != 0 {
            problems.append("inbox: a garbage Last-Event-ID got \(connection.status)")
        }
        for event in connection.events where event.event == "note" {
            let id = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any])?["id"] as? String ?? "?"
            seen[id, default: 0] += 1
        }
    }
    for (id, count) in seen where count > 1 { problems.append("inbox: note \(id) observed \(count) times") }
    for id in Set(seen.keys).subtracting(stored) { problems.append("inbox: note \(id) observed but not stored") }
    let missing = stored.subtracting(seen.keys)
    if !missing.isEmpty { problems.append("inbox: \(missing.count) of \(stored.count) notes never observed") }
    if connections.filter({ $0.status == 200 }).count < 3 { problems.append("inbox: too few connections to mean anything") }
    return problems
}

/// The inbox's promise against the interactions in Postgres: the last `interaction` event the follower received for
/// each interaction (over all its connections, in order) shows it as it stands at the end — state, assignee, the
/// agent's own unread count, the customer's read position, the last message or note — as `GET` shows it to the agent.
func inboxSummaryViolations(_ connections: [ObservedInboxConnection], truth: [String: [String: Any]]) -> [String] {
    var last: [String: [String: Any]] = [:]
    for connection in connections {
        for event in connection.events where event.event == "interaction" {
            guard let data = try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any],
                  let id = data["id"] as? String else { continue }
            last[id] = data
        }
    }
    var problems: [String] = []
    for (id, expected) in truth {
        guard let seen = last[id] else {
            problems.append("inbox: interaction \(id) never shown")
            continue
        }
        for key in ["state", "assigned_agent_id", "unread_count", "read_by_other_through", "last_message_id"] {
            let got = key == "last_message_id" ? (seen["last_message"] as? [String: Any])?["id"] : seen[key]
            if describe(got) != describe(expected[key]) {
                problems.append("inbox: interaction \(id) last shown with \(key) \(describe(got)), it is \(describe(expected[key]))")
            }
        }
    }
    return problems
}

/// A JSON value as text, null and absent alike.
private func describe(_ value: Any?) -> String {
    guard let value, !(value is NSNull) else { return "null" }
    return "\(value)"
}
