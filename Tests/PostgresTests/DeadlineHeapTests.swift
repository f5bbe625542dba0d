import Coordination
@testable import Postgres
import Testing
import TestSupport

/// The reactor's timers as a pure value, on instants the test chooses: due actions come out earliest first, once;
/// cancelled ones never; the earliest entry is reported so the reactor's wait can be shortened.
@Suite(.timeLimit(.minutes(5)))
struct DeadlineHeapTests {
    private let origin = ContinuousClock.now

    @Test func dueActionsComeOutEarliestFirstAndOnlyOnce() {
        var heap = DeadlineHeap<Int>()
        for (index, offset) in [30, 10, 20].enumerated() { _ = heap.schedule(at: origin + .milliseconds(offset), index) }
        #expect(heap.nextInstant == origin + .milliseconds(10))
        let none = heap.takeDue(now: origin + .milliseconds(5))
        let two = heap.takeDue(now: origin + .milliseconds(20))
        let again = heap.takeDue(now: origin + .milliseconds(20))
        let last = heap.takeDue(now: origin + .seconds(1))
        #expect(none.isEmpty && two == [1, 2] && again.isEmpty && last == [0])
        #expect(heap.nextInstant == nil)
    }

    @Test func aCancelledActionNeverRunsAndOnlyAnEarlierEntryIsEarliest() {
        var heap = DeadlineHeap<String>()
        let late = heap.schedule(at: origin + .seconds(2), "late")
        #expect(late.isEarliest)
        let early = heap.schedule(at: origin + .seconds(1), "early")
        #expect(early.isEarliest)
        let latest = heap.schedule(at: origin + .seconds(3), "latest")
        #expect(!latest.isEarliest)
        let cancelled = heap.cancel(early.ticket)
        let cancelledAgain = heap.cancel(early.ticket)
        #expect(cancelled && !cancelledAgain)
        #expect(heap.count == 2)
        let due = heap.takeDue(now: origin + .seconds(2))
        #expect(due == ["late"])
    }

    /// Against a plain list as the model, over random schedules, cancellations and clock steps.
    @Test(arguments: [UInt64(1), 2, 3])
    func matchesAListModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var heap = DeadlineHeap<Int>()
        var model: [(at: Duration, action: Int, ticket: UInt64)] = []
        var now = Duration.zero
        for step in 0 ..< 2_000 {
            switch random.next() % 3 {
            case 0:
                let at = now + .milliseconds(Int(random.next() % 100))
                let (ticket, isEarliest) = heap.schedule(at: origin + at, step)
                // Earliest, or an entry (perhaps a cancelled one) comes no later: the reactor wakes by then anyway.
                #expect(isEarliest ? model.allSatisfy { $0.at >= at } : heap.nextInstant! <= origin + at,
                        "seed \(seed), step \(step)")
                model.append((at, step, ticket))
            case 1 where !model.isEmpty:
                let removed = model.remove(at: Int(random.next() % UInt64(model.count)))
                let cancelled = heap.cancel(removed.ticket)
                #expect(cancelled, "seed \(seed), step \(step)")
            default:
                now += .milliseconds(Int(random.next() % 30))
                let due = model.filter { $0.at <= now }.sorted { ($0.at, $0.ticket) < ($1.at, $1.ticket) }
                model.removeAll { $0.at <= now }
                let taken = heap.takeDue(now: origin + now)
                #expect(Set(taken) == Set(due.map(\.action)), "seed \(seed), step \(step)")
                #expect(heap.count == model.count)
            }
        }
    }
}

/// The reactor's thread runs its timers: each once, not before its time, and a cancelled one never.
@Suite(.timeLimit(.minutes(1)))
struct ReactorTimerTests {
    @Test func timersRunOnTheReactorThreadAndCancelledOnesNever() async {
        let reactor = SocketReactor(name: "timer-test")
        defer { reactor.stop() }
        let ran = Locked<[String]>([])
        // Instants fixed up front and a second away: a test thread that stalls between the calls changes nothing.
        let base = ContinuousClock.now + .seconds(1)
        let cancelled = reactor.schedule(at: base + .milliseconds(20)) { ran.withLock { $0.append("cancelled") } }
        _ = reactor.schedule(at: base + .milliseconds(40)) { ran.withLock { $0.append("second") } }
        _ = reactor.schedule(at: base + .milliseconds(10)) { ran.withLock { $0.append("first") } }
        #expect(reactor.cancel(cancelled))
        await waitUntil { ran.withLock { $0.count } == 2 }
        #expect(ContinuousClock.now >= base + .milliseconds(40))
        #expect(ran.withLock { $0 } == ["first", "second"])
    }
}
