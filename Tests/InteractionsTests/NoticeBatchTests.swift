import Foundation
import Testing
import TestSupport
@testable import Interactions

/// A run of notices dispatched together must give every interaction's subscribers exactly what dispatching the
/// notices one by one gave them: the stored events in order, typing where it came between them.
@Suite("Notice batches", .timeLimit(.minutes(5)))
struct NoticeBatchTests {
    private static func stored(_ seq: Int64) -> InteractionStreamEvent {
        InteractionStreamEvent(seq: seq, kind: .logged(.message), data: "{\"n\":\(seq)}", terminal: false)
    }

    @Test func typingKeepsItsPlaceBetweenTheStoredEventsItCameBetween() {
        let x = UUID(), y = UUID()
        let notices = [InteractionNotice.stored(x, seq: 5), .typing(x, isTyping: true, role: "agent", user: "a-1"),
                       .stored(y, seq: 3), .stored(x, seq: 6)].map(\.payload)
        let batch = NoticeBatch(notices: notices)
        #expect(batch.interactions == [x, y])
        #expect(batch.storedRange[x] == 5 ... 6)
        #expect(batch.storedRange[y] == 3 ... 3)
        let typing = NoticeBatch.typingEvent(isTyping: true, role: "agent", user: "a-1")
        #expect(batch.steps[x] == [.through(5), .ephemeral(typing), .through(6)])
        // The read covers a hole before the first notice (4) too: it goes out with the first step.
        let published = NoticeBatch.sequence(batch.steps[x] ?? [], stored: [4, 5, 6].map(Self.stored))
        #expect(published.map(\.seq) == [4, 5, nil, 6])
        #expect(published[2].kind == .typing)
    }

    /// An erasure's notice reaches subscribers as a `redacted` event naming the ids, where it came between stored
    /// events; one naming no id (the interaction changed otherwise) publishes nothing.
    @Test func redactionsGoOutAsEphemeralEventsNamingTheIds() throws {
        let x = UUID()
        let notices = [InteractionNotice.stored(x, seq: 7), .redacted(x, seqs: [2, 5]), .redacted(x, seqs: [])]
        #expect(notices.map { InteractionNotice(payload: $0.payload) } == notices)
        let batch = NoticeBatch(notices: notices.map(\.payload))
        let event = NoticeBatch.redactedEvent([2, 5])
        #expect(batch.steps[x] == [.through(7), .ephemeral(event)])
        #expect(event.data == #"{"event_ids":[2,5]}"#)
        #expect(event.seq == nil && event.kind.eventName == "redacted" && !event.terminal)
        // Long runs of ids are split so that every payload stays under Postgres's 8,000 bytes.
        let many = InteractionNotice.redactions(of: x, seqs: (1 ... 1000).map { Int64(1_000_000_000_000 + $0) })
        #expect(many.count == 3 && many.allSatisfy { $0.payload.utf8.count < 8000 })
        #expect(InteractionNotice(payload: "redacted:\(x.uuidString):1,x") == nil)
    }

    @Test func unreadableNoticesAreSkipped() {
        let x = UUID()
        let batch = NoticeBatch(notices: ["nonsense", "typing:bad", InteractionNotice.stored(x, seq: 1).payload, ""])
        #expect(batch.interactions == [x])
        #expect(batch.steps[x] == [.through(1)])
    }

    /// Random runs over a few interactions, seeded: the batched plan, fed one read per interaction, publishes what
    /// the notice-by-notice rule publishes (each stored notice reads from the mark, or from just before its own
    /// event when there is none, up to its own event; typing goes out at once).
    @Test(arguments: [1, 2, 3, 42, 2026] as [UInt64])
    func aRunPublishesWhatNoticeByNoticeDispatchPublishes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(max(bound, 1))) }
        let ids = (0 ..< 4).map { _ in UUID() }
        for _ in 0 ..< 200 {
            // Each interaction's log: 1 ... last; marks as an earlier run may have left them.
            var last: [UUID: Int64] = [:]
            var marks: [UUID: Int64] = [:]
            var notices: [InteractionNotice] = []
            for id in ids {
                last[id] = Int64(below(12))
                if below(2) == 0, let top = last[id], top > 0 { marks[id] = Int64(below(Int(top))) }
            }
            for _ in 0 ..< below(10) {
                let id = ids[below(ids.count)]
                if below(6) == 0 {
                    notices.append(.redacted(id, seqs: (0 ..< below(3)).map { _ in Int64(1 + below(12)) }))
                } else if below(3) == 0 || (last[id] ?? 0) == 0 {
                    notices.append(.typing(id, isTyping: below(2) == 0, role: "customer", user: "u"))
                } else {
                    notices.append(.stored(id, seq: Int64(1 + below(Int(last[id] ?? 1)))))
                }
            }
            func log(_ id: UUID, after: Int64, through: Int64) -> [InteractionStreamEvent] {
                guard after < through else { return [] }
                return (after + 1 ... min(through, last[id] ?? 0)).map(Self.stored)
            }

            // Notice by notice.
            var oneByOne: [UUID: [InteractionStreamEvent]] = [:]
            var singleMarks = marks
            for notice in notices {
                switch notice {
                case .stored(let id, let seq):
                    if let mark = singleMarks[id], seq <= mark { continue }
                    let events = log(id, after: singleMarks[id] ?? seq - 1, through: seq)
                    oneByOne[id, default: []] += events
                    if let top = events.last?.seq { singleMarks[id] = max(singleMarks[id] ?? top, top) }
                case .typing(let id, let isTyping, let role, let user):
                    oneByOne[id, default: []].append(NoticeBatch.typingEvent(isTyping: isTyping, role: role, user: user))
                case .redacted(let id, let seqs):
                    if !seqs.isEmpty { oneByOne[id, default: []].append(NoticeBatch.redactedEvent(seqs)) }
                case .note:
                    continue
                }
            }

            // As one run.
            let batch = NoticeBatch(notices: notices.map(\.payload))
            var batched: [UUID: [InteractionStreamEvent]] = [:]
            for id in batch.interactions {
                var stored: [InteractionStreamEvent] = []
                if let range = batch.storedRange[id], marks[id].map({ range.upperBound > $0 }) ?? true {
                    stored = log(id, after: marks[id] ?? range.lowerBound - 1, through: range.upperBound)
                }
                batched[id] = NoticeBatch.sequence(batch.steps[id] ?? [], stored: stored)
            }
            for id in ids {
                #expect((batched[id] ?? []) == (oneByOne[id] ?? []), "seed \(seed): \(notices)")
            }
        }
    }
}
