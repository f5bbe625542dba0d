/// A Postgres snapshot (`pg_snapshot`): which transactions' writes it sees. Every transaction id below `xmin` had
/// ended when it was taken, none from `xmax` on had started, and those in `inProgress` were running. A committed
/// write is visible in it exactly when its transaction is neither at or past `xmax` nor in `inProgress` — what
/// Postgres's `pg_visible_in_snapshot` answers, here without a round trip.
struct XidSnapshot: Sendable, Hashable {
    /// The lowest transaction id still running when the snapshot was taken.
    let xmin: UInt64
    /// One past the highest transaction id that had started.
    let xmax: UInt64
    /// The ids between the two that were running, ascending.
    let inProgress: [UInt64]

    init(xmin: UInt64, xmax: UInt64, inProgress: [UInt64]) {
        self.xmin = xmin
        self.xmax = xmax
        self.inProgress = inProgress.sorted()
    }

    /// Reads `pg_snapshot`'s text form, `xmin:xmax:xip,xip,…`; nil when it is not one.
    init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]), xmin <= xmax else { return nil }
        var running: [UInt64] = []
        for part in parts[2].split(separator: ",") {
            guard let xid = UInt64(part), xid >= xmin, xid < xmax else { return nil }
            running.append(xid)
        }
        self.init(xmin: xmin, xmax: xmax, inProgress: running)
    }

    /// `pg_snapshot`'s text form.
    var text: String { "\(xmin):\(xmax):" + inProgress.map(String.init).joined(separator: ",") }

    /// Whether a committed write of transaction `xid` is visible in this snapshot.
    func isVisible(_ xid: UInt64) -> Bool {
        if xid < xmin { return true }
        if xid >= xmax { return false }
        return !inProgress.contains(xid)
    }

    /// Whether every committed write visible in this snapshot is visible in `later` too.
    func isCovered(by later: XidSnapshot) -> Bool {
        guard xmax <= later.xmax else { return false }
        // Seen here: below xmax and not running. Such an id must not be running (or unstarted) in `later`.
        return later.inProgress.allSatisfy { $0 >= xmax || inProgress.contains($0) }
    }
}
