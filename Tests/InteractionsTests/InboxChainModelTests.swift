import Foundation
import Testing
import TestSupport
@testable import Interactions

/// The inbox's promise checked against a model of Postgres, without one: transactions take change numbers in one
/// order and commit (or roll back) in another, a dispatcher reads batches between snapshots, a client reads some
/// of what waits, is cut off and resumes from its last id, again and again. Every interaction's summary the client
/// gets must be newer than the one it had (nothing sent twice), and once everything has committed and been read,
/// the client must hold every interaction's latest version (nothing lost). Uses the real snapshot, position and
/// queue types; what it models is only the database's visibility and the feed's loop.
@Suite("Inbox chain model", .timeLimit(.minutes(2)))
struct InboxChainModelTests {
    /// A change row: which interaction, by which transaction, under which number; a note is a change of its own,
    /// delivered itself rather than as its interaction's latest state.
    struct Change { let interaction: Int; let xid: UInt64; let seq: Int64; var isNote = false }

    struct Database {
        var nextXid: UInt64 = 1000
        var nextSeq: Int64 = 1
        /// Open transactions: their changes so far (one interaction each: the row lock).
        var running: [UInt64: [Change]] = [:]
        var committed: [Change] = []

        func snapshot() -> XidSnapshot {
            XidSnapshot(xmin: running.keys.min() ?? nextXid, xmax: nextXid, inProgress: Array(running.keys))
        }

        func locked(_ interaction: Int) -> Bool {
            running.values.contains { $0.first?.interaction == interaction }
        }

        /// `pg_visible_in_snapshot` over committed rows: what a statement at `snapshot` reads.
        func visible(at snapshot: XidSnapshot) -> [Change] { committed.filter { snapshot.isVisible($0.xid) } }

        /// What the notes query returns at `now` for `position`: the notes it does not cover, in number order.
        func notes(since position: InboxPosition, at now: XidSnapshot) -> [Change] {
            visible(at: now).filter { $0.isNote && !position.covers(xid: $0.xid, seq: $0.seq) }.sorted { $0.seq < $1.seq }
        }

        /// What the changes query returns at `now` for `position`: per interaction with an uncovered change, its
        /// latest uncovered number and its version (its latest visible change), in number order.
        func changes(since position: InboxPosition, at now: XidSnapshot) -> [(interaction: Int, seq: Int64, version: Int64)] {
            let seen = visible(at: now)
            var uncovered: [Int: Int64] = [:]
            for change in seen where !change.isNote && !position.covers(xid: change.xid, seq: change.seq) {
                uncovered[change.interaction] = max(uncovered[change.interaction] ?? 0, change.seq)
            }
            return uncovered.map { interaction, seq in
                (interaction, seq, seen.filter { $0.interaction == interaction && !$0.isNote }.map(\.seq).max()!)
            }.sorted { $0.seq < $1.seq }
        }
    }

    /// An event as queued for the client: the interaction's version (or a note's number), and the position after it.
    struct Event { let interaction: Int; let version: Int64; let position: InboxPosition; var isNote = false }

    @Test(arguments: Array(1 ... 40))
    func clientsGetEveryLatestVersionOnceAcrossCutsAndLateCommits(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let interactions = 6
        var database = Database()
        var chain: XidSnapshot?
        var connected = false
        /// Interactions by index; notes by their number, negated.
        var queue = InboxQueue<Int>()
        var waiting: [Int: Event] = [:]
        var notesReceived: [Int64: Int] = [:]
        var firstSnapshot: XidSnapshot?
        var position: InboxPosition?
        var had: [Int: Int64] = [:]

        func receive(_ event: Event) {
            if event.isNote {
                notesReceived[event.version, default: 0] += 1
                position = event.position
                return
            }
            #expect(event.version > (had[event.interaction] ?? 0),
                    "seed \(seed): interaction \(event.interaction) sent version \(event.version) again or older than \(had[event.interaction] ?? 0)")
            had[event.interaction] = event.version
            position = event.position
        }

        func offer(_ changes: [(interaction: Int, seq: Int64, version: Int64)], notes: [Change], from before: InboxPosition,
                   at now: XidSnapshot) {
            // Interactions and notes together, in number order, as the feed merges its two queries.
            let items = (changes.map { ($0.interaction, $0.seq, $0.version, false) } + notes.map { ($0.interaction, $0.seq, $0.seq, true) })
                .sorted { $0.1 < $1.1 }
            for (index, item) in items.enumerated() {
                let after = before.afterChange(numbered: item.1, isLast: index == items.count - 1, at: now)
                let key = item.3 ? -Int(item.1) : item.0
                waiting[key] = Event(interaction: item.0, version: item.2, position: after, isNote: item.3)
                queue.put(key, key.bytes)
            }
        }

        func read(_ count: Int) {
            // The queue gives the order; the model keeps each interaction's event beside it.
            let order = queue.takeAll().map(Int.init(bytes:))
            for (number, interaction) in order.enumerated() {
                let event = waiting.removeValue(forKey: interaction)!
                if number < count {
                    receive(event)
                } else {
                    waiting[interaction] = event
                    queue.put(interaction, interaction.bytes)
                }
            }
        }

        func connect() {
            let now = database.snapshot()
            if let position {
                guard position.highestXmax <= now.xmax else { Issue.record("a position from the future"); return }
                offer(database.changes(since: position, at: now), notes: database.notes(since: position, at: now),
                      from: position, at: now)
            } else {
                // A snapshot: the client starts over with every interaction as it stands.
                had = [:]
                for change in database.visible(at: now) { had[change.interaction] = max(had[change.interaction] ?? 0, change.seq) }
                position = InboxPosition(now)
                firstSnapshot = firstSnapshot ?? now
            }
            chain = now
            connected = true
        }

        for _ in 0 ..< 400 {
            switch random.next(10) {
            case 0, 1:
                let free = (0 ..< interactions).filter { !database.locked($0) }
                guard let interaction = free.randomElement(using: &random) else { continue }
                let xid = database.nextXid
                database.nextXid += 1
                database.running[xid] = (0 ..< 1 + random.next(2)).flatMap { _ in
                    // A note's write records its interaction's change, then the note, numbered after it.
                    let withNote = random.next(3) == 0
                    defer { database.nextSeq += withNote ? 2 : 1 }
                    let change = Change(interaction: interaction, xid: xid, seq: database.nextSeq)
                    return withNote ? [change, Change(interaction: interaction, xid: xid, seq: database.nextSeq + 1, isNote: true)] : [change]
                }
            case 2, 3:
                guard let xid = database.running.keys.randomElement(using: &random) else { continue }
                if random.next(5) == 0 {
                    database.running.removeValue(forKey: xid)
                } else {
                    database.committed += database.running.removeValue(forKey: xid)!
                }
            case 4, 5, 6:
                guard connected, let previous = chain else { continue }
                let now = database.snapshot()
                offer(database.changes(since: InboxPosition(previous), at: now),
                      notes: database.notes(since: InboxPosition(previous), at: now), from: InboxPosition(previous), at: now)
                chain = now
            case 7, 8:
                if connected { read(random.next(3)) }
            default:
                if connected {
                    connected = false
                    queue = InboxQueue()
                    waiting = [:]
                } else {
                    connect()
                }
            }
        }
        // Everything commits; the client reconnects if it must, and reads all.
        for xid in database.running.keys.sorted() { database.committed += database.running.removeValue(forKey: xid)! }
        if !connected { connect() }
        let now = database.snapshot()
        offer(database.changes(since: InboxPosition(chain!), at: now),
              notes: database.notes(since: InboxPosition(chain!), at: now), from: InboxPosition(chain!), at: now)
        read(Int.max)
        var latest: [Int: Int64] = [:]
        for change in database.committed where !change.isNote {
            latest[change.interaction] = max(latest[change.interaction] ?? 0, change.seq)
        }
        #expect(had == latest, "seed \(seed)")
        // Every note committed after the client's first snapshot, exactly once (those before it are history).
        let expected = database.committed.filter { $0.isNote && !(firstSnapshot?.isVisible($0.xid) ?? false) }.map(\.seq)
        #expect(notesReceived.filter { $0.value > 1 }.isEmpty, "seed \(seed): notes received twice: \(notesReceived.filter { $0.value > 1 })")
        #expect(Set(notesReceived.keys) == Set(expected), "seed \(seed): notes missing \(Set(expected).subtracting(notesReceived.keys))")
    }
}

private extension Int {
    /// The queue's stand-in bytes for a key.
    var bytes: [UInt8] { withUnsafeBytes(of: self) { Array($0) } }
    init(bytes: [UInt8]) { self = bytes.withUnsafeBytes { $0.load(as: Int.self) } }
}

private extension SplitMix64 {
    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
