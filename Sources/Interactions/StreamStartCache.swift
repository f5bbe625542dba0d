import Foundation

/// What a new event stream of a live interaction starts with — who may see the interaction and its state snapshot —
/// remembered from an earlier stream's reads, so a crowd attaching to one interaction costs the database one read
/// instead of one per stream (a fan-out's ten thousand subscribers, a page reloaded by every agent at once).
///
/// A remembered start is exact for a stream that subscribes before looking it up: every event after the snapshot's
/// `seq` reaches the stream live. That holds because the dispatcher forgets an interaction's start before it
/// publishes anything of it (``forget(_:)``, on every change notice naming it), forgets every start when it cannot
/// follow the notices (``forgetAll()``: no subscriber here, or notices missed), and a start read from the database is
/// kept only if nothing was forgotten since the read began (``ticket``). Pure, so those rules are unit-tested.
struct StreamStartCache {
    /// One interaction's remembered start.
    struct Start: Equatable {
        let tenantID: UUID
        /// The interaction's customer, when a read for that customer confirmed it (nil: only callers who are not
        /// customers are answered from here).
        let customerID: String?
        /// The `state` event a stream without `Last-Event-ID` opens with; never a final one.
        let snapshot: InteractionStreamEvent
    }

    /// Most interactions remembered; beyond it, the oldest entries go all at once (the next streams read again).
    let limit: Int
    private var starts: [UUID: Start] = [:]
    /// Counts every forgetting: a read that began at another count may be older than what was forgotten.
    private(set) var ticket: UInt64 = 0

    init(limit: Int = 4_096) {
        self.limit = limit
    }

    /// The remembered snapshot of `id`, if the caller (its tenant, and the customer it is, if one) may see it.
    func snapshot(of id: UUID, tenantID: UUID, customerID: String?) -> InteractionStreamEvent? {
        guard let start = starts[id], start.tenantID == tenantID else { return nil }
        if let customerID, start.customerID != customerID { return nil }
        return start.snapshot
    }

    /// Keeps `start` for `id` when nothing was forgotten since `ticket` was taken (before the read that produced it)
    /// and its snapshot is not final (a finished interaction has no live streams to start).
    mutating func remember(_ start: Start, for id: UUID, ticket: UInt64) {
        guard ticket == self.ticket, !start.snapshot.terminal, start.snapshot.seq != nil else { return }
        let known = starts[id]
        if known == nil && starts.count >= limit { starts.removeAll(keepingCapacity: true) }
        // A customer confirmed by an earlier read stays known (an interaction's customer changes only by erasure, and
        // its notice forgets the start).
        let customerID = start.customerID ?? known.flatMap { $0.tenantID == start.tenantID ? $0.customerID : nil }
        starts[id] = Start(tenantID: start.tenantID, customerID: customerID, snapshot: start.snapshot)
    }

    /// These interactions changed (or may have): their starts are read again. Any read under way is then not kept,
    /// whichever interaction it was for: one count for all keeps the cache small, at the price of a start read
    /// again now and then while other interactions are busy.
    mutating func forget(_ ids: some Sequence<UUID>) {
        ticket &+= 1
        guard !starts.isEmpty else { return }
        for id in ids { starts.removeValue(forKey: id) }
    }

    /// Every start is read again.
    mutating func forgetAll() {
        ticket &+= 1
        if !starts.isEmpty { starts.removeAll() }
    }

    /// How many interactions are remembered.
    var count: Int { starts.count }
}
