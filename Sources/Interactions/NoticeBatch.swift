import Foundation
import HTTPServer

/// A run of change notices turned into what live dispatch must do, per interaction, in the notices' order: read
/// the log up to each stored event's `seq`, and hand typing on between them. Pure, so the order it keeps (typing
/// between the stored events it came between; interactions independent of each other) is unit-tested.
struct NoticeBatch: Equatable {
    /// One step of one interaction's dispatch.
    enum Step: Equatable {
        /// Publish the stored events up to and including this `seq`.
        case through(Int64)
        /// Publish this ephemeral event (typing).
        case ephemeral(InteractionStreamEvent)
    }

    /// Interactions in the order their first notice came.
    private(set) var interactions: [UUID] = []
    /// Each interaction's steps, in notice order.
    private(set) var steps: [UUID: [Step]] = [:]
    /// Per interaction, from the first stored `seq` noticed to the highest: what one log read must cover (a read
    /// with no mark starts just before the first notice's event, as the first notice alone would read).
    private(set) var storedRange: [UUID: ClosedRange<Int64>] = [:]
    /// Interactions a notice says changed in the database (a stored event, or an erasure's redaction): what a new
    /// stream would start from is no longer what it was (typing and notes change nothing stored).
    private(set) var changed: [UUID] = []

    /// The plan for `notices` (payloads; unreadable ones are skipped).
    init(notices: [String]) {
        for payload in notices {
            switch InteractionNotice(payload: payload) {
            case .stored(let id, let seq):
                changed.append(id)
                append(.through(seq), to: id)
                let range = storedRange[id]
                storedRange[id] = (range?.lowerBound ?? seq) ... max(range?.upperBound ?? seq, seq)
            case .typing(let id, let isTyping, let role, let user):
                append(.ephemeral(Self.typingEvent(isTyping: isTyping, role: role, user: user)), to: id)
            case .redacted(let id, let seqs) where !seqs.isEmpty:
                changed.append(id)
                append(.ephemeral(Self.redactedEvent(seqs)), to: id)
            case .redacted(let id, _):
                // The interaction itself changed (its customer, its subject): nothing to hand streams, but what a new
                // one starts from is read again. Inbox streams look for themselves.
                changed.append(id)
            case .note, nil:
                // Notes reach agents through the inbox (and the note routes), never through interaction streams.
                continue
            }
        }
    }

    private mutating func append(_ step: Step, to id: UUID) {
        if steps[id] == nil { interactions.append(id) }
        steps[id, default: []].append(step)
    }

    /// The `typing` event subscribers receive (not stored, so it has no `seq`).
    static func typingEvent(isTyping: Bool, role: String, user: String) -> InteractionStreamEvent {
        // Keys sorted, as the other events' JSON: written directly (a dictionary through `JSONSerialization` bridged
        // every value, for the most frequent notice of a live chat).
        var json = JSONBytes(capacity: 80 + role.utf8.count + user.utf8.count)
        json.raw(#"{"expires_in":5,"sender_id":"#)
        json.string(user)
        json.raw(#","sender_role":"#)
        json.string(role)
        json.raw(isTyping ? #","typing":true}"# : #","typing":false}"#)
        return InteractionStreamEvent(seq: nil, kind: .typing, data: json.text, terminal: false)
    }

    /// The `redacted` event subscribers receive: the ids of events an erasure redacted (not stored: no `seq`).
    static func redactedEvent(_ seqs: [Int64]) -> InteractionStreamEvent {
        InteractionStreamEvent(seq: nil, kind: .redacted,
                               data: #"{"event_ids":["# + seqs.map(String.init).joined(separator: ",") + "]}", terminal: false)
    }

    /// `steps` applied to `stored` (the interaction's events read from the log, in `seq` order): the events to
    /// publish, in order. Each `through` step releases the stored events up to its `seq` not yet released; an
    /// ephemeral step goes out where it stands.
    static func sequence(_ steps: [Step], stored: [InteractionStreamEvent]) -> [InteractionStreamEvent] {
        var output: [InteractionStreamEvent] = []
        var next = stored.startIndex
        for step in steps {
            switch step {
            case .through(let seq):
                while next < stored.endIndex, let eventSeq = stored[next].seq, eventSeq <= seq {
                    output.append(stored[next])
                    next += 1
                }
            case .ephemeral(let event):
                output.append(event)
            }
        }
        return output
    }
}
