/// Loads many keys with one call (a data loader): each caller asks for one key, and keys asked for while a batch runs
/// wait and go together into the next one, so a burst of N different keys costs a few calls, not N. A key asked for
/// by several callers at once is loaded once for all of them.
///
/// A batch starts at once when fewer than `maxConcurrentBatches` run (a lone caller never waits for company) and takes
/// at most `maxBatchSize` keys, oldest first. While the loader is busy (keys came while a batch ran), the next
/// batch first waits `gather` for more keys to join (unless it is full already): in a storm of arrivals this trades
/// a few milliseconds per caller for far fewer, fuller batches. Batches run in tasks of their own: a caller that is
/// cancelled stops waiting (with `CancellationError`) and its key's batch goes on for the others; a batch that fails
/// fails exactly its own callers.
///
/// Callers either wait (``value(for:)``) or leave a delivery the batch awaits with the answer
/// (``enqueue(_:deliver:)``), which spares a task suspended per request when the caller is already shared.
public final class BatchLoader<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Loads the values of `keys` (distinct); a key missing from the answer gives its callers nil.
    public typealias Load = @Sendable (_ keys: [Key]) async throws -> [Key: Value]

    // `@usableFromInline` and `@inlinable` throughout: callers in other modules then run the loader specialised for
    // their key and value types, not through generic metadata (a storm of stream starts goes through three loaders).
    /// Receives a key's answer without a task of its own waiting for it (see ``enqueue(_:deliver:)``).
    public typealias Delivery = @Sendable (Result<Value?, any Error>) async -> Void

    /// How a waiter is answered: by resuming a suspended caller, or by a delivery the batch awaits.
    ///
    /// The caller's continuation is an `UnsafeContinuation`: its layout does not depend on `Value`, so a waiter is
    /// copied and destroyed in place (a `CheckedContinuation`, whose layout the standard library keeps to itself,
    /// went through generic metadata at every copy: a storm of stream starts copies thousands). It is resumed exactly
    /// once because a waiter leaves `State.waiting` exactly once, under the lock: taken by ``nextBatch()``, whose
    /// runner then resumes it, or by ``remove(_:key:)``, whose caller (``giveUp(_:key:)``) then does.
    @usableFromInline
    enum Answer: Sendable {
        case continuation(UnsafeContinuation<Value?, any Error>)
        case delivery(Delivery)
    }

    @usableFromInline
    struct Waiter: Sendable {
        @usableFromInline let id: UInt64
        @usableFromInline let answer: Answer

        @inlinable
        init(id: UInt64, answer: Answer) {
            self.id = id
            self.answer = answer
        }
    }

    @usableFromInline
    struct State {
        /// Callers waiting for a batch, by key.
        @usableFromInline var waiting: [Key: [Waiter]] = [:]
        /// Keys in the order they were first asked for; `head` is the next to take (keys already taken or given up
        /// by every caller are skipped).
        @usableFromInline var order: [Key] = []
        @usableFromInline var head = 0
        @usableFromInline var running = 0
        @usableFromInline var nextID: UInt64 = 0
        @usableFromInline var statistics = BatchLoaderStatistics()
    }

    @usableFromInline let load: Load
    @usableFromInline let maxBatchSize: Int
    @usableFromInline let maxConcurrentBatches: Int
    @usableFromInline let gather: Duration
    /// The executor the batch runners prefer (the one the callers' tasks run on, so a batch's answer resumes them
    /// without a hop between threads), or nil for the global executor.
    @usableFromInline let executor: (any TaskExecutor)?
    /// Guards the waiting callers by key, their order, the number of batches running and the statistics.
    @usableFromInline let state = Locked(State())

    /// A loader calling `load` with at most `maxBatchSize` keys, at most `maxConcurrentBatches` calls at a time, each
    /// batch after the first of a busy spell gathering keys for `gather` first; batches run on `executor` when given.
    public init(maxBatchSize: Int = 500, maxConcurrentBatches: Int = 1, gather: Duration = .zero,
                executor: (any TaskExecutor)? = nil, load: @escaping Load) {
        precondition(maxBatchSize > 0 && maxConcurrentBatches > 0 && gather >= .zero)
        self.load = load
        self.executor = executor
        self.maxBatchSize = maxBatchSize
        self.maxConcurrentBatches = maxConcurrentBatches
        self.gather = gather
    }

    /// The value of `key` from the batch it joins; nil when the batch's answer has none.
    @inlinable
    public func value(for key: Key) async throws -> Value? {
        let id = nextWaiterID()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Value?, any Error>) in
                add(Waiter(id: id, answer: .continuation(continuation)), for: key)
                // Cancelled before the waiter was registered: the handler found nothing to resume.
                if Task.isCancelled { giveUp(id, key: key) }
            }
        } onCancel: {
            giveUp(id, key: key)
        }
    }

    /// Asks for `key` without waiting: the batch that loads it awaits `deliver` with the answer (exactly once),
    /// unless ``withdraw(_:key:)`` takes the request back first. For a caller that is itself shared by many, such
    /// as a `RequestCoordinator` load: the answer reaches it without a task of its own suspended here.
    ///
    /// Returns the request's id, for ``withdraw(_:key:)``.
    @inlinable
    public func enqueue(_ key: Key, deliver: @escaping Delivery) -> UInt64 {
        let id = nextWaiterID()
        add(Waiter(id: id, answer: .delivery(deliver)), for: key)
        return id
    }

    /// Takes back request `id` of ``enqueue(_:deliver:)`` if no batch has taken it yet; its delivery is then never
    /// called. Returns false when a batch already has it (the delivery will be called).
    @inlinable
    @discardableResult
    public func withdraw(_ id: UInt64, key: Key) -> Bool {
        remove(id, key: key) != nil
    }

    /// A fresh id for a waiter.
    @inlinable
    func nextWaiterID() -> UInt64 {
        state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Registers `waiter` for `key`, starting a batch runner if fewer than `maxConcurrentBatches` run.
    @inlinable
    func add(_ waiter: Waiter, for key: Key) {
        let startBatch = state.withLock { state -> Bool in
            if state.waiting[key] == nil { state.order.append(key) }
            state.waiting[key, default: []].append(waiter)
            guard state.running < maxConcurrentBatches else { return false }
            state.running += 1
            return true
        }
        if startBatch { Task.preferring(executor) { await self.runBatches() } }
    }

    /// Batches run and keys loaded so far.
    public var statistics: BatchLoaderStatistics { state.withLock { $0.statistics } }

    /// Resumes waiter `id` with `CancellationError` unless a batch has taken it (the batch resumes it then).
    @inlinable
    func giveUp(_ id: UInt64, key: Key) {
        guard case .continuation(let continuation) = remove(id, key: key)?.answer else { return }
        continuation.resume(throwing: CancellationError())
    }

    /// Removes waiter `id` of `key` unless a batch has taken it.
    @inlinable
    func remove(_ id: UInt64, key: Key) -> Waiter? {
        state.withLock { state -> Waiter? in
            guard var waiters = state.waiting[key], let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = waiters.remove(at: index)
            state.waiting[key] = waiters.isEmpty ? nil : waiters
            return waiter
        }
    }

    /// Takes batches of waiting keys and loads them until none is left.
    @inlinable
    func runBatches() async {
        while let batch = nextBatch() {
            let answer: Result<[Key: Value], any Error>
            do {
                answer = .success(try await load(batch.map(\.key)))
            } catch {
                answer = .failure(error)
            }
            // Keys that came while this batch ran mean a busy loader: their batch gets a moment to fill. Counted
            // before this batch's callers are answered, so a caller that asks again once answered never waits.
            let gatherFirst = gather > .zero && (1 ..< maxBatchSize).contains(waitingKeyCount)
            for (key, waiters) in batch {
                let result = answer.map { $0[key] }
                for waiter in waiters {
                    switch waiter.answer {
                    case .continuation(let continuation): continuation.resume(with: result)
                    case .delivery(let deliver): await deliver(result)
                    }
                }
            }
            if gatherFirst { try? await Task.sleep(for: gather) }
        }
    }

    /// Distinct keys waiting for a batch.
    @inlinable
    public var waitingKeyCount: Int { state.withLock { $0.waiting.count } }

    /// Batches running now, their answers delivered or not yet (0 once the loader is idle).
    public var batchesRunning: Int { state.withLock { $0.running } }

    /// Callers and deliveries waiting for a batch to take their keys (a key asked for twice counts twice).
    public var waitingRequestCount: Int { state.withLock { $0.waiting.values.reduce(0) { $0 + $1.count } } }

    /// Up to `maxBatchSize` keys with their waiters, oldest first; nil (and one runner fewer) when none waits.
    @inlinable
    func nextBatch() -> [(key: Key, waiters: [Waiter])]? {
        state.withLock { state in
            var batch: [(key: Key, waiters: [Waiter])] = []
            while batch.count < maxBatchSize, state.head < state.order.count {
                let key = state.order[state.head]
                state.head += 1
                if let waiters = state.waiting.removeValue(forKey: key) { batch.append((key, waiters)) }
            }
            if state.head == state.order.count {
                state.order.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head > 4096 && state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)  // a storm that never lets the queue empty
                state.head = 0
            }
            guard !batch.isEmpty else {
                state.running -= 1
                return nil
            }
            state.statistics.batches += 1
            state.statistics.keys += batch.count
            return batch
        }
    }
}

/// How much a `BatchLoader` has batched.
public struct BatchLoaderStatistics: Sendable, Equatable {
    /// Calls of the load function.
    public var batches = 0
    /// Keys those calls loaded (each key once per call, however many callers asked for it).
    public var keys = 0
}
