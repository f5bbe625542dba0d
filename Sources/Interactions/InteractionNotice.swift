import Accounts
import Foundation
import Postgres

/// The payload of a change notice on `InteractionStore.channel`: ids only, the events themselves are read from the
/// log — except typing, which is not stored and travels whole.
public enum InteractionNotice: Sendable, Equatable {
    /// A stored event: `<id>:<seq>`.
    case stored(UUID, seq: Int64)
    /// Someone started or stopped typing: `typing:<id>:<0|1>:<role>:<user>` (the user id may contain colons).
    case typing(UUID, isTyping: Bool, role: String, user: String)
    /// An agent wrote a private note: `note:<id>:<note_seq>` (agents' streams only).
    case note(UUID, noteSeq: Int64)
    /// An erasure redacted these events of the log (or, with none, changed the interaction otherwise):
    /// `redacted:<id>:<seq>,<seq>…`.
    case redacted(UUID, seqs: [Int64])

    /// Most event ids one `redacted` notice names: a NOTIFY payload must stay under 8,000 bytes.
    static let redactionsPerNotice = 400

    /// The notices announcing that `seqs` of `id` were redacted, in runs that fit a payload (one with no ids when
    /// `seqs` is empty: the interaction changed, and inbox streams must look).
    static func redactions(of id: UUID, seqs: [Int64]) -> [InteractionNotice] {
        guard !seqs.isEmpty else { return [.redacted(id, seqs: [])] }
        let sorted = seqs.sorted()
        return stride(from: 0, to: sorted.count, by: redactionsPerNotice).map {
            .redacted(id, seqs: Array(sorted[$0 ..< min($0 + redactionsPerNotice, sorted.count)]))
        }
    }

    /// The NOTIFY payload.
    public var payload: String {
        switch self {
        case .stored(let id, let seq):
            "\(id.lowercased):\(seq)"
        case .typing(let id, let isTyping, let role, let user):
            "typing:\(id.lowercased):\(isTyping ? 1 : 0):\(role):\(user)"
        case .note(let id, let noteSeq):
            "note:\(id.lowercased):\(noteSeq)"
        case .redacted(let id, let seqs):
            "redacted:\(id.lowercased):" + seqs.map(String.init).joined(separator: ",")
        }
    }

    /// Reads a payload; nil when it is neither form.
    public init?(payload: String) {
        // A stored event's notice (every message's) is read in place: its id is the first 36 bytes, then a colon.
        // No other form has a colon there (their prefixes put one inside the id). Splitting it cost about 3,000
        // instructions, an array and its substrings.
        let utf8 = payload.utf8
        if let colon = utf8.index(utf8.startIndex, offsetBy: 36, limitedBy: utf8.endIndex), colon != utf8.endIndex,
           utf8[colon] == UInt8(ascii: ":") {
            guard let id = UUIDText.parse(Substring(utf8[..<colon])),
                  let seq = Int64(Substring(utf8[utf8.index(after: colon)...])) else { return nil }
            self = .stored(id, seq: seq)
            return
        }
        // Split on the bytes: splitting the string splits it into characters first (about 17,000 instructions for
        // each notice of a message, 5 % of a POST's).
        let parts = payload.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map(Substring.init)
        if parts.first == "typing" {
            guard parts.count >= 5, let id = UUIDText.parse(parts[1]) else { return nil }
            self = .typing(id, isTyping: parts[2] == "1", role: String(parts[3]), user: parts[4...].joined(separator: ":"))
            return
        }
        if parts.first == "note" {
            guard parts.count == 3, let id = UUIDText.parse(parts[1]), let noteSeq = Int64(parts[2]) else { return nil }
            self = .note(id, noteSeq: noteSeq)
            return
        }
        if parts.first == "redacted" {
            guard parts.count == 3, let id = UUIDText.parse(parts[1]) else { return nil }
            let pieces = parts[2].split(separator: ",")
            let seqs = pieces.compactMap { Int64($0) }
            guard seqs.count == pieces.count else { return nil }
            self = .redacted(id, seqs: seqs)
            return
        }
        guard parts.count == 2, let id = UUIDText.parse(parts[0]), let seq = Int64(parts[1]) else { return nil }
        self = .stored(id, seq: seq)
    }
}
