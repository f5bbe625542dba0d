/// Tasks waiting for a condition that lives in a ``Locked`` value, each by id so a cancelled one can leave early.
///
/// Kept inside the locked value it waits on, so that the condition turning true and the waiters being taken out
/// are one step under one lock: a waiter can never check the condition, miss it, and then wait for ever.
public struct WaiterList: Sendable {
    /// Waiters by id; nil while a waiter's continuation is not yet stored.
    private var waiters: [UInt64: CheckedContinuation<Void, Never>?] = [:]
    private var lastID: UInt64 = 0

    /// No waiters.
    public init() {}

    /// Takes every stored waiter out, to be resumed once the lock is released.
    public mutating func releaseAll() -> [CheckedContinuation<Void, Never>] {
        defer { waiters = [:] }
        return waiters.values.compactMap { $0 }
    }

    fileprivate mutating func enter() -> UInt64 {
        lastID += 1
        waiters[lastID] = .some(nil)
        return lastID
    }

    /// Stores waiter `id`'s continuation; false when it was released or left meanwhile (resume it at once).
    fileprivate mutating func store(_ continuation: CheckedContinuation<Void, Never>, for id: UInt64) -> Bool {
        guard waiters[id] != nil else { return false }
        waiters[id] = continuation
        return true
    }

    fileprivate mutating func leave(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        waiters.removeValue(forKey: id) ?? nil
    }
}

extension [CheckedContinuation<Void, Never>] {
    /// Resumes every continuation (call after releasing the lock that held them).
    public func resumeAll() { for continuation in self { continuation.resume() } }
}

extension Locked {
    /// Returns once `isDone` holds for the value, or as soon as the calling task is cancelled. Whoever makes
    /// `isDone` true must, in the same `withLock`, take `waiters` out with ``WaiterList/releaseAll()`` and resume them.
    public func wait(until isDone: (Value) -> Bool, in waiters: any WritableKeyPath<Value, WaiterList> & Sendable) async {
        let id = withLock { value -> UInt64? in isDone(value) ? nil : value[keyPath: waiters].enter() }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let stored = withLock { value in !Task.isCancelled && value[keyPath: waiters].store(continuation, for: id) }
                if !stored { continuation.resume() }
            }
        } onCancel: {
            withLock { $0[keyPath: waiters].leave(id) }?.resume()
        }
    }

    /// As ``wait(until:in:)``, and returns at `deadline` too.
    public func wait(until isDone: @escaping @Sendable (Value) -> Bool,
                     in waiters: any WritableKeyPath<Value, WaiterList> & Sendable,
                     deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(until: isDone, in: waiters) }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }
}
