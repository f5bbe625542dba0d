/// Where an inbox stream's client stands: which changes of the tenant's interactions it has been sent. A change is a
/// row of `interaction_changes` — the transaction that wrote it (`xid`) and its number (`seq`, from a sequence, so
/// numbers are taken in one order and committed in another). The client has a change when some clause covers it: the
/// change is visible in the clause's snapshot and, if the clause has a bound, numbered at most that.
///
/// Positions follow the dispatcher's chain of snapshots, as PgQ's batches do: each batch of changes is what became
/// visible between one snapshot and the next, sent in number order, so in the middle of a batch the position is
/// "all of the previous snapshot, and of this one up to the last number sent"; at its end, the new snapshot alone.
/// A transaction that commits late, with a low number, is never skipped: it is not visible in the snapshots the
/// client holds, whatever numbers came after it.
///
/// One interaction's changes are written under its row lock, so they commit in number order: if a clause covers one,
/// it covers every earlier one of the same interaction.
struct InboxPosition: Sendable, Hashable {
    /// A snapshot, and the highest change number it covers (nil: all of them).
    struct Clause: Sendable, Hashable {
        let snapshot: XidSnapshot
        let through: Int64?
    }

    /// Covered is covered by any of them; at most ``maximumClauses``.
    let clauses: [Clause]

    /// A resumed stream adds one clause to its client's two at most.
    static let maximumClauses = 3

    /// Everything visible in `snapshot`.
    init(_ snapshot: XidSnapshot) {
        clauses = [Clause(snapshot: snapshot, through: nil)]
    }

    init(clauses: [Clause]) {
        self.clauses = clauses
    }

    /// Whether the client has the change written by `xid` as number `seq`.
    func covers(xid: UInt64, seq: Int64) -> Bool {
        clauses.contains { $0.snapshot.isVisible(xid) && ($0.through.map { seq <= $0 } ?? true) }
    }

    /// This position, plus the changes visible in `snapshot` numbered at most `through`: the position after sending
    /// an interaction whose latest change is `through`, in a batch read at `snapshot`. Clauses the new one makes
    /// redundant are dropped.
    func adding(_ snapshot: XidSnapshot, through: Int64?) -> InboxPosition {
        let added = Clause(snapshot: snapshot, through: through)
        var kept = clauses.filter { !($0.isSubsumed(by: added)) }
        kept.append(added)
        return InboxPosition(clauses: kept)
    }

    /// The position after sending, from a batch read at `now` on top of this position, the interaction whose latest
    /// uncovered change is numbered `seq`, the batch's changes going out in number order: the batch up to `seq`;
    /// after the last one sent, all of `now` (what the stream skipped of it, its client does not need).
    func afterChange(numbered seq: Int64, isLast: Bool, at now: XidSnapshot) -> InboxPosition {
        adding(now, through: isLast ? nil : seq)
    }

    /// The lowest transaction id a change it does not cover may have: the lowest `xmin` of its snapshots.
    var lowestUncoveredXid: UInt64 { clauses.map(\.snapshot.xmin).min() ?? 0 }

    /// Every change of a transaction below this is covered: the highest `xmin` among the clauses with no bound (those
    /// cover all a snapshot sees, and a snapshot sees every transaction below its `xmin`).
    var coveredBelow: UInt64 { clauses.filter { $0.through == nil }.map(\.snapshot.xmin).max() ?? 0 }

    /// The highest `xmax` of its snapshots: a position past the database's current one is not from this database.
    var highestXmax: UInt64 { clauses.map(\.snapshot.xmax).max() ?? 0 }
}

extension InboxPosition.Clause {
    /// Whether every change this clause covers is covered by `other` too.
    func isSubsumed(by other: InboxPosition.Clause) -> Bool {
        guard snapshot.isCovered(by: other.snapshot) else { return false }
        guard let bound = other.through else { return true }
        return through.map { $0 <= bound } ?? false
    }
}
