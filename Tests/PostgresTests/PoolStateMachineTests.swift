import Testing
@testable import Postgres

/// The pool's bookkeeping, without connections: `Connection` is a plain string.
struct PoolStateMachineTests {
    typealias Machine = PoolStateMachine<String>

    func isOpenSlot(_ action: Machine.AcquireAction) -> Bool {
        if case .grant(.openSlot) = action { return true } else { return false }
    }

    @Test func opensUpToTheMaximumThenQueues() {
        var machine = Machine(maxConnections: 2)
        #expect(isOpenSlot(machine.acquire(waiter: 1)))
        #expect(isOpenSlot(machine.acquire(waiter: 2)))
        guard case .wait = machine.acquire(waiter: 3) else { Issue.record("expected to wait"); return }
        #expect(machine.stats == PostgresPoolStats(size: 2, inUse: 2, idle: 0, waiters: 1))
    }

    @Test func releaseHandsTheConnectionToTheFirstWaiter() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1)
        _ = machine.acquire(waiter: 2)
        _ = machine.acquire(waiter: 3)
        let action = machine.release("c1", reusable: true)
        guard case (2, .connection("c1"))? = action.grant else { Issue.record("expected waiter 2 to get c1"); return }
        #expect(action.close == nil)
        #expect(machine.stats == PostgresPoolStats(size: 1, inUse: 1, idle: 0, waiters: 1))
    }

    @Test func releaseWithoutWaitersKeepsTheConnectionIdleAndReusesItLast() {
        var machine = Machine(maxConnections: 2)
        _ = machine.acquire(waiter: 1)
        _ = machine.acquire(waiter: 2)
        _ = machine.release("a", reusable: true)
        _ = machine.release("b", reusable: true)
        #expect(machine.stats == PostgresPoolStats(size: 2, inUse: 0, idle: 2, waiters: 0))
        guard case .grant(.connection("b")) = machine.acquire(waiter: 3) else { Issue.record("expected b"); return }
    }

    @Test func brokenConnectionIsClosedAndItsSlotOfferedToAWaiter() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1)
        _ = machine.acquire(waiter: 2)
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
        _ = machine.acquire(waiter: 1)
        #expect(machine.slotFreed().grant == nil)
        #expect(isOpenSlot(machine.acquire(waiter: 2)))
    }

    @Test func removedWaiterIsSkipped() {
        var machine = Machine(maxConnections: 1)
        _ = machine.acquire(waiter: 1)
        _ = machine.acquire(waiter: 2)
        _ = machine.acquire(waiter: 3)
        let removed = machine.removeWaiter(2)
        let removedAgain = machine.removeWaiter(2)
        #expect(removed && !removedAgain)
        guard case (3, _)? = machine.release("c", reusable: true).grant else { Issue.record("expected waiter 3"); return }
    }

    @Test func closeReturnsIdleAndWaitersAndClosesLaterReleases() {
        var machine = Machine(maxConnections: 2)
        _ = machine.acquire(waiter: 1)
        _ = machine.acquire(waiter: 2)
        _ = machine.release("idle", reusable: true)
        _ = machine.acquire(waiter: 3)
        _ = machine.acquire(waiter: 4)
        let (idle, waiters) = machine.close()
        #expect(idle.isEmpty && waiters == [4])
        #expect(machine.release("leased", reusable: true).close == "leased")
        #expect(machine.release("idle", reusable: true).close == "idle")
        guard case .fail(.poolClosed) = machine.acquire(waiter: 5) else { Issue.record("expected poolClosed"); return }
        #expect(machine.stats == PostgresPoolStats(size: 0, inUse: 0, idle: 0, waiters: 0))
    }
}

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
