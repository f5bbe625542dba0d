import Foundation
import Testing
import TestSupport
@testable import Interactions

/// A remembered stream start must serve only callers who may see the interaction, and only while it is exact: a
/// stream that subscribes and then finds it gets, live, every event after its snapshot — no gap, no duplicate —
/// however commits, notices, stream starts and their reads interleave.
@Suite("Stream start cache", .timeLimit(.minutes(5)))
struct StreamStartCacheTests {
    private static func snapshot(_ seq: Int64, terminal: Bool = false) -> InteractionStreamEvent {
        InteractionStreamEvent(seq: seq, kind: .logged(.state), data: #"{"state":"started","snapshot":true}"#,
                               terminal: terminal)
    }

    @Test func aStartIsServedOnlyToCallersWhoMaySeeTheInteraction() {
        var cache = StreamStartCache()
        let id = UUID(), tenant = UUID()
        cache.remember(.init(tenantID: tenant, customerID: "c-1", snapshot: Self.snapshot(3)), for: id, ticket: cache.ticket)
        #expect(cache.snapshot(of: id, tenantID: tenant, customerID: "c-1")?.seq == 3)
        #expect(cache.snapshot(of: id, tenantID: tenant, customerID: nil)?.seq == 3)  // an agent of the tenant
        #expect(cache.snapshot(of: id, tenantID: tenant, customerID: "c-2") == nil)
        #expect(cache.snapshot(of: id, tenantID: UUID(), customerID: nil) == nil)
        #expect(cache.snapshot(of: UUID(), tenantID: tenant, customerID: nil) == nil)

        // Read for an agent, a start names no customer: customers read for themselves.
        let other = UUID()
        cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(1)), for: other, ticket: cache.ticket)
        #expect(cache.snapshot(of: other, tenantID: tenant, customerID: nil)?.seq == 1)
        #expect(cache.snapshot(of: other, tenantID: tenant, customerID: "c-1") == nil)
        // An agent's later read keeps the customer an earlier read confirmed.
        cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(4)), for: id, ticket: cache.ticket)
        #expect(cache.snapshot(of: id, tenantID: tenant, customerID: "c-1")?.seq == 4)
    }

    @Test func aReadThatBeganBeforeAnyForgettingIsNotKept() {
        var cache = StreamStartCache()
        let id = UUID(), tenant = UUID()
        let ticket = cache.ticket
        cache.forget([UUID()])  // another interaction changed meanwhile
        cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(2)), for: id, ticket: ticket)
        #expect(cache.count == 0)
        cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(2)), for: id, ticket: cache.ticket)
        #expect(cache.count == 1)
        cache.forget([id])
        #expect(cache.snapshot(of: id, tenantID: tenant, customerID: nil) == nil)
        cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(5)), for: id, ticket: cache.ticket)
        let before = cache.ticket
        cache.forgetAll()
        #expect(cache.count == 0 && cache.ticket != before)
    }

    @Test func finalSnapshotsAreNeverKeptAndTheLimitEmptiesRatherThanGrows() {
        var cache = StreamStartCache(limit: 3)
        let tenant = UUID()
        cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(9, terminal: true)), for: UUID(),
                       ticket: cache.ticket)
        #expect(cache.count == 0)
        let ids = (0 ..< 4).map { _ in UUID() }
        for id in ids {
            cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(1)), for: id, ticket: cache.ticket)
        }
        #expect(cache.count == 1)
        #expect(cache.snapshot(of: ids[3], tenantID: tenant, customerID: nil) != nil)
    }

    /// The dispatcher and stream starts as they run, on a model of the database: commits queue notices; the
    /// dispatcher forgets before it publishes (everything, when no stream is here); a stream subscribes, then takes
    /// the remembered start or takes a ticket, reads the log's head later and remembers it later still; busy spells of
    /// commits alternate with quiet ones. Every stream must then see, live, exactly the events after its snapshot.
    @Test(arguments: [1, 7, 42, 2026, 90_001])
    func everyStreamGetsExactlyTheEventsAfterItsSnapshot(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let tenant = UUID()
        let ids = [UUID(), UUID()]
        var cache = StreamStartCache()
        var head: [UUID: Int64] = [ids[0]: 1, ids[1]: 1]
        var notices: [(id: UUID, seq: Int64)] = []
        struct Stream {
            let id: UUID
            var start: Int64?
            var ticket: UInt64?
            var read: Int64?
            var live: [Int64] = []
            var attached = true
        }
        var streams: [Stream] = []
        var remembered = 0
        for step in 0 ..< 3_000 {
            // Busy spells (commits) and quiet ones (none: starts are remembered and served).
            let quiet = step / 250 % 2 == 1
            let id = ids[Int.random(in: 0 ..< ids.count, using: &random)]
            switch Int.random(in: 0 ..< 20, using: &random) {
            case 0 ... 1 where !quiet:
                head[id, default: 0] += 1
                notices.append((id, head[id] ?? 0))
            case 2 ... 5 where !notices.isEmpty:
                let notice = notices.removeFirst()
                if !streams.contains(where: \.attached) { cache.forgetAll(); continue }
                cache.forget([notice.id])
                for index in streams.indices where streams[index].attached && streams[index].id == notice.id {
                    streams[index].live.append(notice.seq)
                }
            case 6 ... 11:
                var stream = Stream(id: id)
                if let snapshot = cache.snapshot(of: id, tenantID: tenant, customerID: nil) {
                    stream.start = snapshot.seq
                    remembered += 1
                } else {
                    stream.ticket = cache.ticket
                }
                streams.append(stream)
            case 12 ... 14:
                // Some started stream's read of the log's head happens now.
                if let index = streams.indices.filter({ streams[$0].ticket != nil && streams[$0].read == nil })
                    .randomElement(using: &random) {
                    streams[index].read = head[streams[index].id]
                }
            case 15 ... 17:
                // Some read stream takes its snapshot and offers it to the cache.
                if let index = streams.indices.filter({ streams[$0].read != nil && streams[$0].start == nil })
                    .randomElement(using: &random), let read = streams[index].read, let ticket = streams[index].ticket {
                    streams[index].start = read
                    cache.remember(.init(tenantID: tenant, customerID: nil, snapshot: Self.snapshot(read)),
                                   for: streams[index].id, ticket: ticket)
                }
            case 18 ... 19:
                if let index = streams.indices.filter({ streams[$0].attached && streams[$0].start != nil })
                    .randomElement(using: &random) {
                    streams[index].attached = false
                    #expect(Self.isExact(streams[index].live, after: streams[index].start ?? 0, through: nil))
                }
            default:
                break
            }
        }
        for index in streams.indices where streams[index].start == nil {
            streams[index].start = streams[index].read ?? head[streams[index].id]
        }
        for notice in notices {
            for index in streams.indices where streams[index].attached && streams[index].id == notice.id {
                streams[index].live.append(notice.seq)
            }
        }
        #expect(remembered > 50, "the run started \(remembered) streams from a remembered start")
        for stream in streams where stream.attached {
            #expect(Self.isExact(stream.live, after: stream.start ?? 0, through: head[stream.id]),
                    "stream from \(stream.start ?? -1) saw \(stream.live) of \(head[stream.id] ?? -1)")
        }
    }

    /// Whether the live events a stream kept (those after its snapshot's `seq`) count on from it without a gap, up to
    /// `through` when given.
    private static func isExact(_ live: [Int64], after start: Int64, through: Int64?) -> Bool {
        let kept = live.filter { $0 > start }
        let expected = Array(stride(from: start + 1, through: through ?? (start + Int64(kept.count)), by: 1))
        return kept == expected
    }
}
