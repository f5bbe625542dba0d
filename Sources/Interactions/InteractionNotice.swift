import Accounts
import Foundation

/// The payload of a change notice on `InteractionStore.channel`: ids only, the events themselves are read from the
/// log — except typing, which is not stored and travels whole.
public enum InteractionNotice: Sendable, Equatable {
    /// A stored event: `<id>:<seq>`.
    case stored(UUID, seq: Int64)
    /// Someone started or stopped typing: `typing:<id>:<0|1>:<role>:<user>` (the user id may contain colons).
    case typing(UUID, isTyping: Bool, role: String, user: String)
    /// An agent wrote a private note: `note:<id>:<note_seq>` (agents' streams only).
    case note(UUID, noteSeq: Int64)

    /// The NOTIFY payload.
    public var payload: String {
        switch self {
        case .stored(let id, let seq):
            "\(id.lowercased):\(seq)"
        case .typing(let id, let isTyping, let role, let user):
            "typing:\(id.lowercased):\(isTyping ? 1 : 0):\(role):\(user)"
        case .note(let id, let noteSeq):
            "note:\(id.lowercased):\(noteSeq)"
        }
    }

    /// Reads a payload; nil when it is neither form.
    public init?(payload: String) {
        let parts = payload.split(separator: ":", omittingEmptySubsequences: false)
        if parts.first == "typing" {
            guard parts.count >= 5, let id = UUID(uuidString: String(parts[1])) else { return nil }
            self = .typing(id, isTyping: parts[2] == "1", role: String(parts[3]), user: parts[4...].joined(separator: ":"))
            return
        }
        if parts.first == "note" {
            guard parts.count == 3, let id = UUID(uuidString: String(parts[1])), let noteSeq = Int64(parts[2]) else { return nil }
            self = .note(id, noteSeq: noteSeq)
            return
        }
        guard parts.count == 2, let id = UUID(uuidString: String(parts[0])), let seq = Int64(parts[1]) else { return nil }
        self = .stored(id, seq: seq)
    }
}
