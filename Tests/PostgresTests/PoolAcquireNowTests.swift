import Testing
import TestSupport
@testable import Postgres

/// ``PoolStateMachine/acquireNow()`` is the pool's fast path: a lease that finds a connection or slot free takes it
/// without queueing as a waiter. Two machines driven by the same seeded events, one acquiring through the fast path
/// first (then `acquire` when it declines, as the pool does) and one through `acquire` alone, must answer every event
/// alike and end alike: the fast path grants exactly what `acquire` would have granted at once, and declines without
/// changing anything, so no waiter is overtaken.
@Suite(.timeLimit(.minutes(2)))
struct PoolAcquireNowTests {
    typealias Machine = PoolStateMachine<String>

    static func describe(_ grant: Machine.Grant) -> String {
        switch grant {
        case .connection(let connection): "connection \(connection)"
        case .openSlot: "open slot"
        }
    }

    static func describe(_ action: Machine.AcquireAction, base: ContinuousClock.Instant) -> String {
        switch action {
        case .grant(let grant): "grant \(describe(grant))"
        case .wait(let armTimer): "wait, arm \(armTimer.map { "\($0 - base)" } ?? "nothing")"
        case .fail(let kind): "fail \(kind)"
        }
    }

    static func describe(_ action: Machine.ReleaseAction) -> String {
        "close \(action.close ?? "-"), grant \(action.grant.map { "\($0.waiter): \(describe($0.grant))" } ?? "-")"
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func theFastPathGrantsWhatAcquireGrantsAtOnceAndDeclinesWithoutAChange(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let base = ContinuousClock.now
        let size = Int.random(in: 1 ... 4, using: &random)
        var plain = Machine(maxConnections: size), fast = Machine(maxConnections: size)
        // What each lease holds, the same in both (the machines must grant alike for that to stay true).
        var holders: [(waiter: UInt64, connection: String?)] = []
        var queued: [UInt64] = []
        var nextWaiter: UInt64 = 0, nextConnection = 0
        func hold(_ waiter: UInt64, _ grant: Machine.Grant) {
            if case .connection(let connection) = grant { holders.append((waiter, connection)) } else { holders.append((waiter, nil)) }
            queued.removeAll { $0 == waiter }
        }
        for step in 0 ..< 400 {
            let choice = Int.random(in: 0 ..< 10, using: &random)
            if choice < 4 || holders.isEmpty {
                nextWaiter += 1
                let deadline = base + .milliseconds(Int.random(in: 1 ... 1000, using: &random))
                let expected = plain.acquire(waiter: nextWaiter, deadline: deadline)
                let observed: Machine.AcquireAction = fast.acquireNow().map { .grant($0) }
                    ?? fast.acquire(waiter: nextWaiter, deadline: deadline)
                #expect(Self.describe(observed, base: base) == Self.describe(expected, base: base), "seed \(seed), step \(step)")
                switch expected {
                case .grant(let grant): hold(nextWaiter, grant)
                case .wait: queued.append(nextWaiter)
                case .fail: break
                }
            } else if choice < 8 {
                let index = Int.random(in: holders.indices, using: &random)
                let holder = holders.remove(at: index)
                let expected: Machine.ReleaseAction, observed: Machine.ReleaseAction
                if holder.connection == nil && Bool.random(using: &random) {
                    (expected, observed) = (plain.slotFreed(), fast.slotFreed())
                } else {
                    let connection = holder.connection ?? { nextConnection += 1; return "c\(nextConnection)" }()
                    let reusable = Int.random(in: 0 ..< 5, using: &random) > 0
                    (expected, observed) = (plain.release(connection, reusable: reusable), fast.release(connection, reusable: reusable))
                }
                #expect(Self.describe(observed) == Self.describe(expected), "seed \(seed), step \(step)")
                if let (waiter, grant) = expected.grant { hold(waiter, grant) }
            } else if choice < 9, let waiter = queued.randomElement(using: &random) {
                #expect(fast.removeWaiter(waiter) == plain.removeWaiter(waiter), "seed \(seed), step \(step)")
                queued.removeAll { $0 == waiter }
            } else {
                let now = base + .milliseconds(Int.random(in: 0 ... 1000, using: &random))
                let (expected, observed) = (plain.timerFired(at: now), fast.timerFired(at: now))
                #expect(observed.expired == expected.expired && observed.next == expected.next, "seed \(seed), step \(step)")
                queued.removeAll { expected.expired.contains($0) }
            }
            #expect(fast.stats == plain.stats, "seed \(seed), step \(step)")
        }
        let (expectedIdle, expectedWaiters) = plain.close()
        let (observedIdle, observedWaiters) = fast.close()
        #expect(observedIdle == expectedIdle && observedWaiters == expectedWaiters, "seed \(seed)")
        #expect(fast.acquireNow() == nil, "a closed pool grants nothing at once")
    }

    @Test func aFullPoolDeclinesAndLeavesItsQueueAsItWas() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1, deadline: .now + .seconds(60))
        _ = machine.acquire(waiter: 2, deadline: .now + .seconds(60))
        #expect(machine.acquireNow() == nil)
        #expect(machine.stats == PostgresPoolStats(size: 1, inUse: 1, idle: 0, waiters: 1))
    }
}
