import Foundation
import Testing
@testable import Interactions

/// Snapshots and positions without a database: visibility as `pg_visible_in_snapshot` defines it, coverage, and
/// positions sealed for one tenant that no one can read, alter or carry to another.
@Suite("Inbox positions", .timeLimit(.minutes(1)))
struct InboxPositionTests {
    @Test func snapshotsReadAndWriteTheirTextForm() throws {
        let snapshot = try #require(XidSnapshot(text: "100:110:103,105"))
        #expect(snapshot == XidSnapshot(xmin: 100, xmax: 110, inProgress: [105, 103]))
        #expect(snapshot.text == "100:110:103,105")
        #expect(XidSnapshot(text: "7:7:")?.inProgress == [])
        for bad in ["", "1:2", "2:1:", "1:5:9", "1:5:0", "a:5:", "1:5:2,x", "1:5:3:"] {
            #expect(XidSnapshot(text: bad) == nil, "\(bad)")
        }
    }

    @Test func visibilityFollowsPostgres() {
        let snapshot = XidSnapshot(xmin: 100, xmax: 110, inProgress: [103, 105])
        #expect(snapshot.isVisible(99))
        #expect(snapshot.isVisible(100) && snapshot.isVisible(104) && snapshot.isVisible(109))
        #expect(!snapshot.isVisible(103) && !snapshot.isVisible(105))
        #expect(!snapshot.isVisible(110) && !snapshot.isVisible(500))
    }

    @Test func aLaterSnapshotCoversAnEarlierOneUnlessItStillRunsWhatTheEarlierSaw() {
        let earlier = XidSnapshot(xmin: 100, xmax: 110, inProgress: [103])
        #expect(earlier.isCovered(by: XidSnapshot(xmin: 103, xmax: 120, inProgress: [103, 115])))
        #expect(earlier.isCovered(by: XidSnapshot(xmin: 120, xmax: 120, inProgress: [])))
        #expect(!earlier.isCovered(by: XidSnapshot(xmin: 100, xmax: 109, inProgress: [])))
        // 104 was seen by `earlier`: a snapshot in which it still runs cannot be later.
        #expect(!earlier.isCovered(by: XidSnapshot(xmin: 104, xmax: 120, inProgress: [104])))
    }

    /// The regression the design exists for: a change numbered low but committed late is not covered by a position
    /// taken before it committed, whatever numbers the position went up to.
    @Test func aLateCommitIsNotCoveredByAnEarlierPosition() {
        // Transaction 101 took number 5 and is still open; 102 took 6 and committed.
        let before = XidSnapshot(xmin: 101, xmax: 103, inProgress: [101])
        let position = InboxPosition(XidSnapshot(xmin: 100, xmax: 100, inProgress: [])).afterChange(numbered: 6, isLast: false, at: before)
        #expect(position.covers(xid: 102, seq: 6))
        #expect(!position.covers(xid: 101, seq: 5))
        #expect(InboxPosition(before).afterChange(numbered: 0, isLast: true, at: before) == InboxPosition(before))
    }

    @Test func positionsKeepAtMostTheClausesThatMatter() {
        let s1 = XidSnapshot(xmin: 100, xmax: 105, inProgress: [101])
        let s2 = XidSnapshot(xmin: 101, xmax: 110, inProgress: [101, 107])
        var position = InboxPosition(s1)
        position = position.afterChange(numbered: 40, isLast: false, at: s2)
        #expect(position.clauses.count == 2)
        position = position.afterChange(numbered: 45, isLast: false, at: s2)
        #expect(position.clauses == [.init(snapshot: s1, through: nil), .init(snapshot: s2, through: 45)])
        position = position.afterChange(numbered: 50, isLast: true, at: s2)
        #expect(position == InboxPosition(s2))
    }

    /// What pruning may remove under a position: transactions below the `xmin` of a clause without a bound.
    @Test func aPositionCoversEveryTransactionBelowItsUnboundedClausesXmin() {
        let s1 = XidSnapshot(xmin: 100, xmax: 105, inProgress: [101])
        let s2 = XidSnapshot(xmin: 101, xmax: 110, inProgress: [101, 107])
        #expect(InboxPosition(s1).coveredBelow == 100)
        #expect(InboxPosition(s1).afterChange(numbered: 9, isLast: false, at: s2).coveredBelow == 100)
        #expect(InboxPosition(s1).afterChange(numbered: 9, isLast: true, at: s2).coveredBelow == 101)
        for xid in UInt64(0) ..< 101 { #expect(InboxPosition(s2).covers(xid: xid, seq: .max)) }
    }

    @Test func sealedPositionsRoundTripForTheirTenantOnly() throws {
        let codec = try #require(InboxPositionCodec(key: Array(repeating: 7, count: 32)))
        let other = try #require(InboxPositionCodec(key: Array(repeating: 8, count: 32)))
        let tenant = UUID(), stranger = UUID()
        let position = InboxPosition(clauses: [
            .init(snapshot: XidSnapshot(xmin: 1 << 40, xmax: (1 << 40) + 9, inProgress: [(1 << 40) + 2]), through: nil),
            .init(snapshot: XidSnapshot(xmin: (1 << 40) + 2, xmax: (1 << 40) + 20, inProgress: []), through: 0),
        ])
        let text = codec.encode(position, tenant: tenant)
        #expect(codec.decode(text, tenant: tenant) == position)
        #expect(codec.decode(text, tenant: stranger) == nil)
        #expect(other.decode(text, tenant: tenant) == nil)
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        // Nothing readable: the transaction ids do not appear in the text, nor does it repeat for the same position.
        #expect(codec.encode(position, tenant: tenant) != text)
        // The first character altered: to one it is not (the nonce is random, so "x" alone would be it 1 time in 64).
        let altered = (text.first == "x" ? "y" : "x") + text.dropFirst()
        for bad in ["", "0", "AAAA", text + "A", String(text.dropLast()), altered, "!!", "1", "12"] {
            #expect(codec.decode(bad, tenant: tenant) == nil, "\(bad)")
        }
    }

    @Test func unsealedBytesThatAreNotAPositionAreRefused() {
        let valid = InboxPositionCodec.bytes(of: InboxPosition(XidSnapshot(xmin: 5, xmax: 9, inProgress: [6])))
        #expect(InboxPositionCodec.position(from: valid) != nil)
        for cut in 0 ..< valid.count { #expect(InboxPositionCodec.position(from: Array(valid.prefix(cut))) == nil) }
        #expect(InboxPositionCodec.position(from: valid + [0]) == nil)
        #expect(InboxPositionCodec.position(from: [2] + valid.dropFirst()) == nil)
        #expect(InboxPositionCodec.position(from: [1, 0]) == nil)
        #expect(InboxPositionCodec.position(from: [1, 4]) == nil)
        // A running id outside its snapshot's span.
        #expect(InboxPositionCodec.position(from: [1, 1, 5, 4, 1, 9, 0]) == nil)
        // An endless varint.
        #expect(InboxPositionCodec.position(from: [1, 1] + Array(repeating: 0xFF, count: 12)) == nil)
    }

    @Test func theViewRemovesWhatLeavesItOnce() {
        var exact = InboxView(shown: ["a"], exact: true)
        #expect(exact.decide("b", matches: false) == .skip)
        #expect(exact.decide("a", matches: false) == .remove)
        #expect(exact.decide("a", matches: false) == .skip)
        #expect(exact.decide("a", matches: true) == .show)
        #expect(exact.decide("a", matches: false) == .remove)
        var resumed = InboxView(exact: false)
        #expect(resumed.decide("b", matches: false) == .remove)
        #expect(resumed.decide("b", matches: false) == .skip)
        #expect(resumed.decide("b", matches: true) == .show)
        #expect(resumed.decide("b", matches: false) == .remove)
    }

    @Test func theQueueKeepsOneEventPerInteractionTheLatestLast() {
        var queue = InboxQueue<String>()
        queue.put("a", [1])
        queue.put("b", [2])
        queue.put("a", [3])
        #expect(queue.count == 2)
        #expect(queue.takeAll() == [[2], [3]])
        #expect(queue.takeAll() == [])
    }

    @Test func filtersMatchTheListsMeaning() {
        let mine = InboxFilter(assignment: .me, states: [.started])
        #expect(mine.includes(state: .started, assignee: "a", agent: "a"))
        #expect(!mine.includes(state: .started, assignee: "b", agent: "a"))
        #expect(!mine.includes(state: .ended, assignee: "a", agent: "a"))
        let free = InboxFilter(assignment: .none, states: [.started, .ended])
        #expect(free.includes(state: .ended, assignee: nil, agent: "a"))
        #expect(!free.includes(state: .started, assignee: "a", agent: "a"))
        #expect(InboxFilter(assignment: .any, states: [.failed]).includes(state: .failed, assignee: "z", agent: "a"))
    }
}
