import Testing
@testable import Postgres

/// The pool's bookkeeping, without connections: `Connection` is a plain string.
@Suite(.timeLimit(.minutes(5)))
struct PoolStateMachineTests {
    typealias Machine = PoolStateMachine<String>
    /// An instant no test reaches: the waiter does not time out.
    static let later = ContinuousClock.now + .seconds(3600)

    func isOpenSlot(_ action: Machine.AcquireAction) -> Bool {
        if case .grant(.openSlot) = action { return true } else { return false }
    }

    @Test func opensUpToTheMaximumThenQueues() {
        var machine = Machine(maxConnections: 2)
        #expect(isOpenSlot(machine.acquire(waiter: 1, deadline: Self.later)))
        #expect(isOpenSlot(machine.acquire(waiter: 2, deadline: Self.later)))
        guard case .wait = machine.acquire(waiter: 3, deadline: Self.later) else { Issue.record("expected to wait"); return }
        #expect(machine.stats == PostgresPoolStats(size: 2, inUse: 2, idle: 0, waiters: 1))
    }

    @Test func releaseHandsTheConnectionToTheFirstWaiter() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: Self.later)
        _ = machine.acquire(waiter: 3, deadline: Self.later)
        let action = machine.release("c1", reusable: true)
        guard case (2, .connection("c1"))? = action.grant else { Issue.record("expected waiter 2 to get c1"); return }
        #expect(action.close == nil)
        #expect(machine.stats == PostgresPoolStats(size: 1, inUse: 1, idle: 0, waiters: 1))
    }

    @Test func releaseWithoutWaitersKeepsTheConnectionIdleAndReusesItLast() {
        var machine = Machine(maxConnections: 2)
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: Self.later)
        _ = machine.release("a", reusable: true)
        _ = machine.release("b", reusable: true)
        #expect(machine.stats == PostgresPoolStats(size: 2, inUse: 0, idle: 2, waiters: 0))
        guard case .grant(.connection("b")) = machine.acquire(waiter: 3, deadline: Self.later) else { Issue.record("expected b"); return }
    }

    @Test func brokenConnectionIsClosedAndItsSlotOfferedToAWaiter() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: Self.later)
        let action = machine.release("broken", reusable: false)
        #expect(action.close == "broken")
        guard case (2, .openSlot)? = action.grant else { Issue.record("expected waiter 2 to open a slot"); return }
        #expect(machine.stats == PostgresPoolStats(size: 1, inUse: 1, idle: 0, waiters: 0))
        let last = machine.release("fresh", reusable: false)
        #expect(last.close == "fresh" && last.grant == nil)
        #expect(machine.stats == PostgresPoolStats(size: 0, inUse: 0, idle: 0, waiters: 0))
    }

    @Test func failedOpenFreesTheSlot() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        #expect(machine.slotFreed().grant == nil)
        #expect(isOpenSlot(machine.acquire(waiter: 2, deadline: Self.later)))
    }

    @Test func removedWaiterIsSkipped() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: Self.later)
        _ = machine.acquire(waiter: 3, deadline: Self.later)
        let removed = machine.removeWaiter(2)
        let removedAgain = machine.removeWaiter(2)
        #expect(removed && !removedAgain)
        guard case (3, _)? = machine.release("c", reusable: true).grant else { Issue.record("expected waiter 3"); return }
    }

    @Test func closeReturnsIdleAndWaitersAndClosesLaterReleases() {
        var machine = Machine(maxConnections: 2)
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: Self.later)
        _ = machine.release("idle", reusable: true)
        _ = machine.acquire(waiter: 3, deadline: Self.later)
        _ = machine.acquire(waiter: 4, deadline: Self.later)
        let (idle, waiters) = machine.close()
        #expect(idle.isEmpty && waiters == [4])
        #expect(machine.release("leased", reusable: true).close == "leased")
        #expect(machine.release("idle", reusable: true).close == "idle")
        guard case .fail(.poolClosed) = machine.acquire(waiter: 5, deadline: Self.later) else { Issue.record("expected poolClosed"); return }
        #expect(machine.stats == PostgresPoolStats(size: 0, inUse: 0, idle: 0, waiters: 0))
    }
}

@Suite(.timeLimit(.minutes(5)))
struct ConnectionStateMachineTests {
    @Test func queriesGetIncreasingGenerations() {
        var machine = ConnectionStateMachine()
        #expect(machine.begin() == .proceed(generation: 1))
        #expect(machine.end(healthy: true) == .none)
        #expect(machine.begin() == .proceed(generation: 2))
    }

    @Test func secondUserIsRejectedWhileBusy() {
        var machine = ConnectionStateMachine()
        _ = machine.begin()
        guard case .fail(.misuse, _) = machine.begin() else { Issue.record("expected misuse"); return }
    }

    @Test func fatalErrorBreaksTheConnection() {
        var machine = ConnectionStateMachine()
        _ = machine.begin()
        _ = machine.end(healthy: false)
        #expect(machine.isBroken)
        guard case .fail(.connection, _) = machine.begin() else { Issue.record("expected connection error"); return }
        #expect(machine.close() == .closeConnection)
        #expect(machine.close() == .none)
    }

    @Test func closeWhileBusyWaitsForTheOperation() {
        var machine = ConnectionStateMachine()
        _ = machine.begin()
        #expect(machine.close() == .none)
        #expect(machine.isBroken)
        #expect(machine.end(healthy: true) == .closeConnection)
        #expect(machine.state == .closed)
    }
}

/// Waiter timeouts as events: one timer for the pool, fired for the head of the queue.
extension PoolStateMachineTests {
    @Test func oneTimerServesAllWaitersAndFiresForTheHeadInQueueOrder() {
        var machine = Machine(maxConnections: 1)
        let t0 = ContinuousClock.now
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        let first = machine.acquire(waiter: 2, deadline: t0 + .seconds(1))
        guard case .wait(let arm) = first, arm == t0 + .seconds(1) else { Issue.record("arm for the first waiter"); return }
        let second = machine.acquire(waiter: 3, deadline: t0 + .seconds(2))
        guard case .wait(nil) = second else { Issue.record("the timer is armed already: \(second)"); return }
        _ = machine.acquire(waiter: 4, deadline: t0 + .seconds(3))

        // Early: nothing expires, fire again at the head's deadline.
        let early = machine.timerFired(at: t0 + .milliseconds(500))
        #expect(early.expired.isEmpty && early.next == t0 + .seconds(1))
        // Late enough for two: they time out together, oldest first; the third is next.
        let late = machine.timerFired(at: t0 + .milliseconds(2500))
        #expect(late.expired == [2, 3] && late.next == t0 + .seconds(3))
        #expect(machine.stats.waiters == 1 && machine.timerArmed)
    }

    @Test func aGrantedOrCancelledWaiterNeverTimesOutAndAnEmptyQueueDisarms() {
        var machine = Machine(maxConnections: 1)
        let t0 = ContinuousClock.now
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: t0 + .seconds(1))
        _ = machine.acquire(waiter: 3, deadline: t0 + .seconds(2))
        let granted = machine.release("a", reusable: true).grant?.waiter  // 2 got the connection in time
        #expect(granted == 2)
        let removed = machine.removeWaiter(3)  // 3's task was cancelled
        #expect(removed)
        let fired = machine.timerFired(at: t0 + .seconds(5))
        #expect(fired.expired.isEmpty && fired.next == nil && !machine.timerArmed)
        // The next waiter arms the idle timer again.
        guard case .wait(let arm) = machine.acquire(waiter: 4, deadline: t0 + .seconds(9)), arm == t0 + .seconds(9) else {
            Issue.record("expected the timer to be armed again")
            return
        }
    }

    @Test func aClosedPoolsTimerFindsNobody() {
        var machine = Machine(maxConnections: 1)
        let t0 = ContinuousClock.now
        _ = machine.acquire(waiter: 1, deadline: Self.later)
        _ = machine.acquire(waiter: 2, deadline: t0 + .seconds(1))
        let failed = machine.close().waiters
        #expect(failed == [2])
        let fired = machine.timerFired(at: t0 + .seconds(2))
        #expect(fired.expired.isEmpty && fired.next == nil)
    }
}
