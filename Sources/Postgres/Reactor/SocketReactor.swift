import Coordination
import Foundation
import Glibc

/// Suspends tasks until a socket is readable or writable, using one epoll instance served by one dedicated thread,
/// which also runs the connections' timers (``schedule(after:_:)``): its wait ends at the earliest deadline.
///
/// A wait first asks whether the socket is ready already and, if so, returns without suspending. Otherwise it arms
/// the descriptor with `EPOLLONESHOT`, so a readiness resumes exactly one waiter exactly once. A descriptor has at
/// most one waiter at a time. Call ``deregister(_:)`` before the socket is closed: epoll drops a
/// closed descriptor by itself, but the number may be reused by the next socket before a stale event is handled.
///
/// It is also a `TaskExecutor`: a task that prefers it (`Task(executorPreference:)`) runs its jobs on the reactor's
/// thread, between its waits. A query's answer then resumes the task on the thread that read the socket's
/// readiness, with no hop to the global executor's threads and back (see ``enqueue(_:)``).
///
/// A service makes one, hands it to its ``PostgresConfiguration``s, and stops it once its connections are closed;
/// configurations given none share one that lives as long as the process (tools, tests).
public final class SocketReactor: TaskExecutor {
    /// The reactor of configurations that name none.
    static let shared = SocketReactor(name: "postgres-reactor")

    private struct Waiter {
        let token: UInt32
        let continuation: CheckedContinuation<Void, any Error>
        /// The timer that ends the wait at its deadline, if it has one.
        var timer: UInt64?
    }

    /// Ends a wait whose deadline passed (``wait(_:for:until:)`` turns it into `false`).
    private struct DeadlinePassed: Error {}

    private struct Table {
        var waiters: [Int32: Waiter] = [:]
        var lastToken: UInt32 = 0
        var isStopped = false
        var deadlines = DeadlineHeap<@Sendable () -> Void>()
        /// Jobs of tasks that prefer this executor, to run on the thread in order.
        var jobs: [UnownedJob] = []
        /// The thread is in, or about to enter, its wait: a job enqueued now must wake it.
        var sleeping = false
        /// A wake-up was written since the thread last woke (one is enough).
        var wakeSent = false
    }

    /// Event data that marks the wake-up eventfd rather than a socket.
    private static let wakeMarker = UInt64.max

    private let epollFD: Int32
    private let wakeFD: Int32
    /// Guards the pending waiter of each descriptor, the token counter, the stopped flag, the timers and the jobs.
    private let table = Locked(Table())

    /// Creates the epoll instance and starts its thread (named `name`); the reactor lives until ``stop()``.
    public init(name: String) {
        epollFD = Epoll.create()
        wakeFD = Epoll.eventFD()
        precondition(epollFD >= 0 && wakeFD >= 0, "cannot create epoll/eventfd: errno \(errno)")
        let watched = Epoll.control(epollFD, Epoll.add, wakeFD, events: Epoll.readable, data: Self.wakeMarker)
        precondition(watched == 0, "cannot watch eventfd: errno \(errno)")
        ThreadName.start(name) { [self] in self.run() }
    }

    /// Suspends until `fd` is ready for `interest`.
    ///
    /// A non-cancellable wait ignores task cancellation (queries cancel through the server instead); a cancellable
    /// one throws `CancellationError` as soon as the task is cancelled.
    ///
    /// A socket already ready (the server's next bytes arrived while the last ones were being read) returns at once,
    /// without suspending: arming it would only wake the reactor thread to hand the task straight back.
    func wait(_ fd: Int32, for interest: SocketInterest, cancellable: Bool = false) async throws {
        if cancellable { try Task.checkCancellation() }
        if interest.isReady(fd) { return }
        guard cancellable else {
            return try await arm(fd, for: interest, token: nextToken(), cancellable: false)
        }
        try await armCancellable(fd, for: interest, deadline: nil)
    }

    /// Suspends until `fd` is ready for `interest` (true) or `deadline` has passed (false); throws
    /// `CancellationError` as soon as the task is cancelled.
    ///
    /// The deadline is a timer kept with the wait, under the same lock: it ends this wait and no other, and a
    /// readiness that comes first takes the timer away.
    func wait(_ fd: Int32, for interest: SocketInterest, until deadline: ContinuousClock.Instant) async throws -> Bool {
        try Task.checkCancellation()
        if interest.isReady(fd) { return true }
        do {
            try await armCancellable(fd, for: interest, deadline: deadline)
            return true
        } catch is DeadlinePassed {
            return false
        }
    }

    /// A fresh token for a wait, so that a stale event or timer of an earlier wait on the descriptor is ignored.
    private func nextToken() -> UInt32 {
        table.withLock { table in
            table.lastToken &+= 1
            return table.lastToken
        }
    }

    /// Arms a wait that the task's cancellation ends with `CancellationError`.
    private func armCancellable(_ fd: Int32, for interest: SocketInterest, deadline: ContinuousClock.Instant?) async throws {
        let token = nextToken()
        try await withTaskCancellationHandler {
            try await arm(fd, for: interest, token: token, cancellable: true, deadline: deadline)
        } onCancel: {
            self.abandon(fd, token: token, with: CancellationError())
        }
    }

    /// Runs `action` on the reactor's thread once `delay` has passed, unless ``cancel(_:)`` comes first; returns the
    /// ticket for that. The action must be quick: it hands work off, and never blocks.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        schedule(at: .now + delay, action)
    }

    /// Runs `action` on the reactor's thread at `instant`, as ``schedule(after:_:)``.
    func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let (ticket, isEarliest) = table.withLock { $0.deadlines.schedule(at: instant, action) }
        if isEarliest { wake() }
        return ticket
    }

    /// Forgets the action of `ticket` if it has not run; returns whether it was still pending.
    @discardableResult
    func cancel(_ ticket: UInt64) -> Bool {
        table.withLock { $0.deadlines.cancel(ticket) }
    }

    /// Takes a job of a task that prefers this executor: the thread runs it after the readiness and timers it is
    /// handling. Enqueued from the thread itself (a continuation resumed by a socket's readiness), it costs no
    /// wake-up; from another thread, one write to the eventfd when the thread is waiting. Once stopped, jobs run on
    /// the global executor's threads instead, so a task still running then is not stranded.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let action = table.withLock { table -> EnqueueAction in
            if table.isStopped { return .runElsewhere }
            table.jobs.append(job)
            guard table.sleeping && !table.wakeSent else { return .none }
            table.wakeSent = true
            return .wake
        }
        switch action {
        case .none: break
        case .wake: wake()
        case .runElsewhere: runElsewhere([job])
        }
    }

    private enum EnqueueAction { case none, wake, runElsewhere }

    /// Runs jobs that arrived too late for the thread on the global executor's threads, as this executor.
    private func runElsewhere(_ jobs: [UnownedJob]) {
        guard !jobs.isEmpty else { return }
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async {
            for job in jobs { job.runSynchronously(on: executor) }
        }
    }

    /// Whether a task waits on `fd` now (so a test acts only once the wait is armed, not after a guessed pause).
    func hasWaiter(on fd: Int32) -> Bool {
        table.withLock { $0.waiters[fd] != nil }
    }

    /// Fails the wait pending on `fd`, if any, with `error` (a statement deadline that passed with no answer).
    func interrupt(_ fd: Int32, with error: any Error) {
        let waiter = table.withLock { Self.removeWaiter(of: fd, from: &$0) }
        waiter?.continuation.resume(throwing: error)
    }

    /// Forgets `fd`: fails a pending waiter (there should be none) and removes it from the epoll set.
    func deregister(_ fd: Int32) {
        let waiter = table.withLock { table in
            let waiter = Self.removeWaiter(of: fd, from: &table)
            // Once stopped, the epoll descriptor is closed and its number may belong to someone else.
            if !table.isStopped { _ = Epoll.control(epollFD, Epoll.delete, fd, events: 0, data: 0) }
            return waiter
        }
        waiter?.continuation.resume(throwing: PostgresError(.connection, "socket \(fd) was closed while waited on"))
    }

    /// Stops the thread and fails every pending waiter (their connections should be closed by then).
    public func stop() {
        let (waiters, jobs) = table.withLock { table in
            table.isStopped = true
            defer { table.waiters = [:]; table.jobs = [] }
            return (Array(table.waiters.values), table.jobs)
        }
        runElsewhere(jobs)
        for waiter in waiters {
            waiter.continuation.resume(throwing: PostgresError(.connection, "socket reactor stopped"))
        }
        wake()
    }

    /// Ends the thread's current wait (to stop, or to wait for an earlier deadline).
    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    private func arm(_ fd: Int32, for interest: SocketInterest, token: UInt32, cancellable: Bool,
                     deadline: ContinuousClock.Instant? = nil) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            install(continuation, on: fd, for: interest, token: token, cancellable: cancellable, deadline: deadline)
        }
    }

    /// Stores `continuation` as the waiter of `fd` and arms the descriptor, or resumes it at once with the reason it
    /// cannot wait. Out of line, so that the waiting task's frame holds none of this (every query waits here).
    @inline(never)
    private func install(_ continuation: CheckedContinuation<Void, any Error>, on fd: Int32, for interest: SocketInterest,
                         token: UInt32, cancellable: Bool, deadline: ContinuousClock.Instant?) {
        let (failure, isEarliest) = table.withLock { table -> (PostgresError?, Bool) in
            if table.isStopped { return (PostgresError(.connection, "socket reactor stopped"), false) }
            if table.waiters[fd] != nil { return (PostgresError(.misuse, "two tasks waited on socket \(fd) at once"), false) }
            // Armed under the lock, so the reactor thread finds the waiter even if the event fires at once.
            if let failure = register(fd, for: interest, token: token) { return (failure, false) }
            var waiter = Waiter(token: token, continuation: continuation)
            var isEarliest = false
            if let deadline {
                let timer = table.deadlines.schedule(at: deadline) { [self] in
                    self.abandon(fd, token: token, with: DeadlinePassed())
                }
                (waiter.timer, isEarliest) = (timer.ticket, timer.isEarliest)
            }
            table.waiters[fd] = waiter
            return (nil, isEarliest)
        }
        if isEarliest { wake() }
        if let failure {
            continuation.resume(throwing: failure)
        } else if cancellable && Task.isCancelled {
            // Cancelled before the waiter was stored: the cancellation handler found nothing to abandon.
            abandon(fd, token: token, with: CancellationError())
        }
    }

    private func register(_ fd: Int32, for interest: SocketInterest, token: UInt32) -> PostgresError? {
        let data = UInt64(token) << 32 | UInt64(UInt32(bitPattern: fd))
        if Epoll.control(epollFD, Epoll.modify, fd, events: interest.epollEvents, data: data) == 0 { return nil }
        if errno == ENOENT && Epoll.control(epollFD, Epoll.add, fd, events: interest.epollEvents, data: data) == 0 {
            return nil
        }
        return PostgresError(.connection, "cannot watch socket \(fd): \(String(cString: strerror(errno)))")
    }

    private func abandon(_ fd: Int32, token: UInt32, with error: any Error) {
        let waiter = table.withLock { table -> Waiter? in
            guard table.waiters[fd]?.token == token else { return nil }
            return Self.removeWaiter(of: fd, from: &table)
        }
        waiter?.continuation.resume(throwing: error)
    }

    private func resume(_ fd: Int32, token: UInt32) {
        let waiter = table.withLock { table -> Waiter? in
            // A stale event (for a descriptor deregistered and reused since) carries an old token: ignore it.
            guard table.waiters[fd]?.token == token else { return nil }
            return Self.removeWaiter(of: fd, from: &table)
        }
        waiter?.continuation.resume()
    }

    /// Takes the waiter of `fd` out of the table, and its deadline's timer with it.
    private static func removeWaiter(of fd: Int32, from table: inout Table) -> Waiter? {
        guard let waiter = table.waiters.removeValue(forKey: fd) else { return nil }
        if let timer = waiter.timer { _ = table.deadlines.cancel(timer) }
        return waiter
    }

    private func run() {
        let events = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * Epoll.eventSize, alignment: 8)
        defer { events.deallocate() }
        let executor = asUnownedTaskExecutor()
        while true {
            let (next, hasJobs) = table.withLock { table in
                table.sleeping = table.jobs.isEmpty
                return (table.deadlines.nextInstant, !table.jobs.isEmpty)
            }
            let timeout = hasJobs ? Duration.zero : next.map { max(.zero, $0 - .now) }
            let count = Epoll.wait(epollFD, into: events, timeout: timeout)
            table.withLock { table in
                table.sleeping = false
                table.wakeSent = false
            }
            if count < 0 {
                precondition(errno == EINTR, "epoll_wait failed: errno \(errno)")
                continue
            }
            for index in 0..<Int(count) {
                let data = Epoll.data(in: events, at: index)
                if data == Self.wakeMarker {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, MemoryLayout<UInt64>.size)
                    if table.withLock({ $0.isStopped }) { return closeDescriptors() }
                } else {
                    resume(Int32(bitPattern: UInt32(truncatingIfNeeded: data)), token: UInt32(truncatingIfNeeded: data >> 32))
                }
            }
            for action in table.withLock({ $0.deadlines.takeDue(now: .now) }) { action() }
            // The jobs queued so far, the tasks resumed just above among them; those they enqueue wait for the
            // next turn, after the sockets have been looked at again.
            let jobs = table.withLock { table in
                defer { table.jobs.removeAll(keepingCapacity: true) }
                return table.jobs
            }
            for job in jobs { job.runSynchronously(on: executor) }
        }
    }

    private func closeDescriptors() {
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
    }
}
