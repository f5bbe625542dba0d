import Foundation

/// What one subscriber connection observed, recorded for the checker.
struct ObservedConnection: Sendable {
    /// How the `Last-Event-ID` was chosen.
    enum Start: Sendable, Equatable {
        case none, zero, real, stale, future, garbage
    }

    let subscriber: Int
    let interaction: String
    let token: String
    let start: Start
    /// The `Last-Event-ID` sent (nil for `.none`).
    let lastEventID: String?
    let port: Int
    let openedAt: Date
    /// 0 when the connection could not be made.
    var status = 0
    /// Events in arrival order, with when they arrived (heartbeats are not events).
    var events: [(event: ReceivedEvent, at: Date)] = []
    /// The server closed the response (as opposed to the subscriber hanging up).
    var endedByServer = false
    /// Reading stalled past the timeout with the response still open.
    var stalled = false
}

/// What a following subscriber does after a connection's status. A status means something only relative to the
/// position it answered: a 204 to a probe past the log's end says the interaction is over, not that this subscriber
/// holds its final event (it may have hung up just before that event was written), so only a 204 to a position the
/// subscriber really holds ends its following.
enum FollowStep: Sendable, Equatable {
    /// Read the events of this 200.
    case read
    /// Connect again (from a new random start).
    case again
    /// Stop following; `finished` when the subscriber holds its interaction's final event.
    case stop(finished: Bool)

    static func after(status: Int, start: ObservedConnection.Start) -> FollowStep {
        switch (status, start) {
        case (200, _): .read
        case (401, _): .stop(finished: false)
        case (204, .future), (204, .garbage): .again
        case (204, _): .stop(finished: true)
        default: .again
        }
    }
}

/// One event of the interaction's log, as stored in Postgres: the source of truth.
struct LoggedEvent: Sendable {
    let seq: Int64
    let kind: String
    /// The stored payload's fields.
    let payload: [String: String]
    /// An erasure redacted it (its text is gone).
    var redacted = false
    /// When it was stored (nil where a test does not say).
    var createdAt: Date?
}

/// Facts about the run the checker needs besides the observations.
struct RunFacts: Sendable {
    /// Replica kills: (port, when). A connection to that port open at that moment may end without a final event.
    var kills: [(port: Int, at: Date)] = []
    /// The revoked session's token and when its revocation was acknowledged.
    var revoked: (token: String, at: Date)?
    /// How long after a revocation a stream may still deliver.
    var revocationBound: TimeInterval = 5
    /// A user erased during the run.
    var erasure: ErasureFact?

    /// When `token`'s session was revoked (by itself or with its user's erasure), if it was.
    func revokedAt(_ token: String) -> Date? {
        if let revoked, revoked.token == token { return revoked.at }
        if let erasure, erasure.tokens.contains(token) { return erasure.requestedAt }
        return nil
    }
}

/// An erasure of one user during a run: until it completed, streams may show the user's events as they were
/// written; from then on (after the revocation bound) only as the log has them now, redacted and pseudonymized.
struct ErasureFact: Sendable {
    /// The erased user's id, and their sessions' tokens (revoked by the erasure's request).
    let user: String
    let tokens: Set<String>
    let requestedAt: Date
    let completedAt: Date
}

/// Compares what every subscriber observed with the interactions' logs in Postgres, and returns every violation
/// (empty when the history is correct). Pure: no I/O.
struct StreamHistoryCheck {
    let logs: [String: [LoggedEvent]]
    let facts: RunFacts

    func violations(_ connections: [ObservedConnection], finished: [Int: Bool]) -> [String] {
        var problems: [String] = []
        for connection in connections { problems += check(connection) }
        problems += checkSubscribers(connections, finished: finished)
        return problems
    }

    private func check(_ c: ObservedConnection) -> [String] {
        let log = logs[c.interaction] ?? []
        let final = log.last?.seq ?? 0
        let label = "subscriber \(c.subscriber) \(c.start)(\(c.lastEventID ?? "-")) on :\(c.port) status \(c.status)"
        var problems: [String] = []
        let revokedAt = facts.revokedAt(c.token)
        let revokedToken = revokedAt != nil
        switch (c.status, c.start) {
        case (0, _):
            return []  // could not connect: a replica was down
        case (401, _):
            if !revokedToken { problems.append("\(label): 401 for a session that was never revoked") }
            return problems
        case (400, .garbage), (400, .future):
            return []
        case (204, .future):
            return log.last.map(isTerminal) == true ? [] : ["\(label): 204 but the interaction is not over"]
        case (204, _):
            let sent = Int64(c.lastEventID ?? "") ?? -1
            return sent >= final && log.last.map(isTerminal) == true ? [] : ["\(label): 204 before the final event (\(final))"]
        case (200, .garbage), (200, .future):
            return ["\(label): an unusable Last-Event-ID was accepted"]
        case (200, _):
            break
        default:
            return ["\(label): unexpected status"]
        }
        // An erasure's `redacted` events name only events the log holds redacted.
        for (event, _) in c.events where event.event == "redacted" {
            let named = json(event.data)["event_ids"] as? [Int] ?? []
            let wrong = named.filter { seq in !log.contains { $0.seq == Int64(seq) && $0.redacted } }
            if named.isEmpty || !wrong.isEmpty { problems.append("\(label): a redacted event names \(named), not redacted in the log: \(wrong)") }
        }
        // No interaction stream carries a note, to a customer or to an agent: notes travel on inbox streams only.
        if c.events.contains(where: { $0.event.event == "note" || $0.event.data.contains("private") }) {
            problems.append("\(label): observed a note")
        }
        // 200: the ids must run on from the start point with no gap and no duplicate, each matching the log.
        let stored = c.events.filter { $0.event.id != nil }
        var expected: Int64
        var rest = stored[...]
        if c.start == .none {
            guard let first = rest.first else { return checkEnd(c, label: label, stored: []) }
            let snapshotSeq = Int64(first.event.id ?? "") ?? -1
            let data = json(first.event.data)
            if first.event.event != "state" || data["snapshot"] as? Bool != true {
                problems.append("\(label): the first event is not a snapshot")
            }
            if let asOf = log.last(where: { $0.seq <= snapshotSeq && $0.kind == "state" }),
               asOf.payload["state"] != data["state"] as? String {
                problems.append("\(label): snapshot at \(snapshotSeq) says \(data["state"] ?? "?"), the log \(asOf.payload["state"] ?? "?")")
            }
            if snapshotSeq < 1 || snapshotSeq > final { problems.append("\(label): snapshot id \(snapshotSeq) outside the log") }
            expected = snapshotSeq + 1
            rest = rest.dropFirst()
        } else {
            expected = (Int64(c.lastEventID ?? "") ?? 0) + 1
        }
        for (event, at) in rest {
            let seq = Int64(event.id ?? "") ?? -1
            if seq != expected {
                problems.append("\(label): got id \(seq), expected \(expected) (gap or duplicate)")
                break
            }
            if let logged = log.first(where: { $0.seq == seq }) {
                if let mismatch = mismatch(event, logged, at: at) { problems.append("\(label): id \(seq): \(mismatch)") }
            } else {
                problems.append("\(label): id \(seq) is not in the log")
            }
            expected += 1
        }
        if let revokedAt {
            // Written after the revocation and read past the bound. An event written before it may be read later
            // still: it left the server before the stream ended, and a reader on a loaded machine lags.
            let late = stored.filter { event, at in
                let written = log.first { $0.seq == Int64(event.id ?? "") }?.createdAt ?? .distantFuture
                return at > revokedAt.addingTimeInterval(facts.revocationBound) && written > revokedAt
            }
            if !late.isEmpty { problems.append("\(label): \(late.count) events written after the revocation delivered more than \(facts.revocationBound) s after it") }
            if c.openedAt > revokedAt.addingTimeInterval(facts.revocationBound) {
                problems.append("\(label): a revoked session opened a stream")
            }
        }
        return problems + checkEnd(c, label: label, stored: Array(stored))
    }

    /// A response the server ended must end with the log's final event, a `reconnect` event, or a replica kill.
    private func checkEnd(_ c: ObservedConnection, label: String, stored: [(event: ReceivedEvent, at: Date)]) -> [String] {
        if c.stalled { return ["\(label): the stream stalled"] }
        guard c.endedByServer else { return [] }
        let log = logs[c.interaction] ?? []
        if let last = c.events.last?.event, last.id == nil, last.event == "reconnect" { return [] }
        if let last = stored.last?.event, let final = log.last, Int64(last.id ?? "") == final.seq, isTerminal(final) { return [] }
        if facts.kills.contains(where: { $0.port == c.port && $0.at >= c.openedAt }) { return [] }
        return ["\(label): the server ended the stream without the final event or a reconnect event"]
    }

    /// Every subscriber that followed to the end saw every event after its first start point (duplicates from a
    /// stale resume aside), and got the final one.
    private func checkSubscribers(_ connections: [ObservedConnection], finished: [Int: Bool]) -> [String] {
        var problems: [String] = []
        for (subscriber, group) in Dictionary(grouping: connections, by: \.subscriber) {
            guard let first = group.first(where: { $0.status == 200 }) else { continue }
            let log = logs[first.interaction] ?? []
            let revoked = facts.revokedAt(first.token) != nil
            if finished[subscriber] != true && !revoked {
                problems.append("subscriber \(subscriber): never saw its interaction end")
                continue
            }
            if revoked { continue }
            let start: Int64 = first.start == .none
                ? (first.events.first.flatMap { Int64($0.event.id ?? "") } ?? 0) : (Int64(first.lastEventID ?? "") ?? 0)
            let seen = Set(group.filter { $0.status == 200 }.flatMap { $0.events.compactMap { Int64($0.event.id ?? "") } })
            let missing = log.map(\.seq).filter { $0 > start && !seen.contains($0) }
            if !missing.isEmpty { problems.append("subscriber \(subscriber): never received ids \(missing)") }
        }
        return problems
    }

    /// How an observed event differs from the log, if it does in a way the history cannot explain: before an
    /// erasure completed, the erased user's events may show their id and text as written (what the log held then).
    private func mismatch(_ event: ReceivedEvent, _ logged: LoggedEvent, at: Date) -> String? {
        if event.event != logged.kind { return "kind \(event.event), the log has \(logged.kind)" }
        let data = json(event.data)
        let differing = logged.payload.filter { key, value in (data[key] as? String) != value }
        if differing.isEmpty {
            return logged.redacted && data["redacted"] as? Bool != true ? "redacted in the log, not in the stream" : nil
        }
        if let erasure = facts.erasure, differing.keys.allSatisfy({ key in
            (data[key] as? String) == erasure.user || (key == "text" && (data["sender_id"] as? String) == erasure.user)
        }) {
            if at > erasure.completedAt.addingTimeInterval(facts.revocationBound) {
                return "shows the erased user's event as written, \(at.timeIntervalSince(erasure.completedAt)) s after the erasure"
            }
            return nil
        }
        let (key, value) = differing.first!
        return "\(key) is \(data[key] ?? "nil"), the log has \(value)"
    }

    private func isTerminal(_ event: LoggedEvent) -> Bool {
        event.kind == "state" && event.payload["state"] != "started"
    }

    private func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }
}
