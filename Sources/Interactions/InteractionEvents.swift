import Accounts
import Coordination
import Foundation
import Postgres
import Synchronization

/// Live interaction events of this process: every subscriber has its own bounded stream (a `SubscriberHub`), fed by
/// one dispatcher that turns change notices (ids only) into events read from the log, in `seq` order.
///
/// Notices from every replica arrive over the dedicated LISTEN connection; call `handle(notice:)` from ONE task
/// (ordering), `catchUp()` after the listener reconnected (notices may have been missed). As a ``Service``, its
/// `run()` keeps the heartbeat and the credential sweep going and ends every stream at graceful shutdown.
///
/// What one stream has seen is that stream's business alone: the dispatcher's own mark (the last `seq` it handed
/// out per interaction) moves only when it publishes, never because a client claimed an id, and each stream skips
/// what it already has and fills any hole it sees from the log (ids count 1, 2, 3… within an interaction). The
/// mistake to avoid is a resume point shared between streams: one client's `Last-Event-ID` would then decide what
/// every other subscriber of the interaction receives.
public final class InteractionEvents: Service {
    let log: InteractionEventLog
    let hub = SubscriberHub<UUID, InteractionStreamEvent>()
    /// Guards, per interaction with subscribers, the last `seq` the dispatcher handed out.
    private let dispatched = Locked<[UUID: Int64]>([:])
    /// Guards the credential behind every live stream (per-user cap, revocation, expiry).
    private let leases = Locked(StreamLeases())
    /// Guards what new streams of live interactions start with, remembered from earlier streams' reads.
    private let starts = Locked(StreamStartCache())
    /// How many events a subscriber may have waiting before its stream is closed (it then reconnects).
    public let bufferLimit: Int
    /// Most live streams one user (tenant, role, user id) may hold in this process.
    public let streamsPerPrincipal: Int
    /// How often every subscriber gets a heartbeat (while `run()` runs).
    private let heartbeat: Duration
    /// Told of every failed log read during live dispatch (it is retried): for the log and metrics.
    private let onDispatchFailure: @Sendable (any Error) -> Void
    /// Guards the count of failed live-dispatch reads (retried, never dropped).
    private let failures = Locked<Int>(0)
    /// Counts the streams that opened with a remembered snapshot.
    private let startsFromMemory = Atomic<Int>(0)
    /// Guards the count of notice runs parsed and matched against this process's live streams.
    private let runsMatched = Locked<Int>(0)

    /// How long a client should wait before reconnecting: every stream starts with it as its `retry:` field.
    public let reconnectDelay: Duration

    /// Events read through `pool`; every subscriber gets a heartbeat each `heartbeat`.
    public init(pool: PostgresPool, bufferLimit: Int = 256, heartbeat: Duration = .seconds(15),
                reconnectDelay: Duration = .seconds(2), streamsPerPrincipal: Int = 20,
                onDispatchFailure: @escaping @Sendable (any Error) -> Void = { _ in }) {
        self.log = InteractionEventLog(pool: pool)
        self.bufferLimit = bufferLimit
        self.reconnectDelay = reconnectDelay
        self.streamsPerPrincipal = streamsPerPrincipal
        self.onDispatchFailure = onDispatchFailure
        self.heartbeat = heartbeat
    }

    /// Runs the timers — the heartbeat, one slice of the subscribers per tick (`HeartbeatSchedule`: each subscriber
    /// still gets one every `heartbeat`, and no tick writes to every stream at once), and the once-a-second sweep of
    /// expired credentials — until graceful shutdown (or cancellation), then ends every stream (see ``finishAll()``).
    public func run() async {
        let hub = self.hub
        let leases = self.leases
        let schedule = HeartbeatSchedule(interval: heartbeat)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var tick: UInt64 = 0
                while !Task.isCancelled {
                    try? await Task.sleep(for: schedule.tick)
                    if Task.isCancelled { return }
                    hub.publishToAll(InteractionStreamEvent.heartbeat, slice: schedule.slice(atTick: tick), of: schedule)
                    tick &+= 1
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    for stream in leases.withLock({ $0.expired(at: Date()) }) {
                        hub.publish(.reconnect(.sessionExpired), to: stream.interaction, subscriber: stream.id)
                    }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        finishAll()
    }

    /// A new subscriber of `id` for `principal`'s session; subscribe before reading the replay, so nothing falls
    /// between the two. Throws ``InteractionError/streamLimit(_:)`` when the user already holds
    /// ``streamsPerPrincipal`` streams here, ``InteractionError/sessionRevoked(_:)`` when the session was revoked.
    public func subscribe(_ id: UUID, for principal: Principal)
        throws(InteractionError) -> SubscriberHub<UUID, InteractionStreamEvent>.Subscription {
        let leases = self.leases
        let subscription = hub.subscribe(id, bufferLimit: bufferLimit) { streamID in
            leases.withLock { $0.remove(streamID) }
        }
        guard let lease = StreamLeases.Lease(following: id, for: principal) else { return subscription }
        let limit = streamsPerPrincipal
        try leases.withLock({ $0.add(subscription.id, lease, limit: limit) }).check(limit: limit, lease: lease)
        // A stream that ended before its lease was recorded (the interaction finished, shutdown) ran its termination
        // handler already: release the lease here, or it would count against the user forever.
        // (Removing a lease twice, here and in a handler still running, is harmless.)
        if subscription.hasEnded { leases.withLock { $0.remove(subscription.id) } }
        return subscription
    }

    /// Whether a start of `id` is remembered that `principal` may see: the interaction is live, and theirs to see.
    func remembersStart(of id: UUID, for principal: Principal) -> Bool {
        remembered(id, principal) != nil
    }

    /// The `state` event a subscribed stream of `id` opens with, remembered from an earlier stream's read, if
    /// `principal` may see the interaction. Exact only for a stream already subscribed (see ``StreamStartCache``).
    func rememberedSnapshot(of id: UUID, for principal: Principal) -> InteractionStreamEvent? {
        guard let snapshot = remembered(id, principal) else { return nil }
        startsFromMemory.add(1, ordering: .relaxed)
        return snapshot
    }

    private func remembered(_ id: UUID, _ principal: Principal) -> InteractionStreamEvent? {
        let customerID = InteractionStore.customerScope(principal)
        return starts.withLock { $0.snapshot(of: id, tenantID: principal.tenantID, customerID: customerID) }
    }

    /// Streams that opened with a remembered snapshot instead of reading one.
    public var streamsStartedFromMemory: Int { startsFromMemory.load(ordering: .relaxed) }

    /// Taken by a subscribed stream before it reads its snapshot, and handed back to ``remember(_:of:for:ticket:)``.
    var startTicket: UInt64 { starts.withLock { $0.ticket } }

    /// Keeps `snapshot` of `id`, read by a subscribed stream of `principal` (who was found to see the interaction)
    /// since it took `ticket`, for the streams that follow, unless the interaction may have changed since.
    func remember(_ snapshot: InteractionStreamEvent, of id: UUID, for principal: Principal, ticket: UInt64) {
        let start = StreamStartCache.Start(tenantID: principal.tenantID,
                                           customerID: InteractionStore.customerScope(principal), snapshot: snapshot)
        starts.withLock { $0.remember(start, for: id, ticket: ticket) }
    }

    /// Live subscribers, all interactions together (observable; back to zero when clients leave).
    public var subscriberCount: Int { hub.subscriberCount }

    /// Notice runs that were parsed and matched against live streams (the others found none here).
    var noticeRunsMatched: Int { runsMatched.withLock { $0 } }

    /// Live-dispatch log reads that failed (and were retried).
    public var dispatchFailures: Int { failures.withLock { $0 } }

    /// Ends at once every stream opened with `session` (revoked): each gets a final `reconnect` event saying why,
    /// so a client fetches a fresh token and resumes where it was.
    public func endStreams(ofSession session: UUID) {
        for stream in leases.withLock({ $0.revoke(session) }) {
            hub.publish(.reconnect(.sessionRevoked), to: stream.interaction, subscriber: stream.id)
        }
    }

    /// Sessions holding live streams here (to check for revocations missed while the listener was away).
    public var sessionsWithStreams: [UUID] { leases.withLock { $0.sessions } }

    /// Applies one change notice (see ``InteractionNotice``); payloads of neither form are ignored.
    public func handle(notice: String) async {
        await handle(notices: [notice])
    }

    /// Applies a run of change notices, in order, with one log read for all the interactions they name (at most
    /// ``readLimit`` per read): each interaction's subscribers get its stored events up to each notice's `seq`
    /// with its typing between them, exactly as notice by notice. Call from ONE task (ordering).
    public func handle(notices: [String]) async {
        // With no live stream here there is nobody to hand anything to: no notice is parsed, and the marks go (a read
        // would drop each of them for want of subscribers). A stream opened meanwhile reads its replay from the log
        // after subscribing, which holds every event these notices announce.
        guard hub.subscriberCount > 0 else {
            dispatched.withLock { if !$0.isEmpty { $0.removeAll() } }
            starts.withLock { $0.forgetAll() }
            return
        }
        runsMatched.withLock { $0 += 1 }
        let batch = NoticeBatch(notices: notices)
        // Before anything of theirs is published: a stream that finds a start remembered gets every later event live.
        if !batch.changed.isEmpty { starts.withLock { $0.forget(batch.changed) } }
        for ids in Self.reads(of: batch.interactions) {
            guard let stored = await read(ids, ranges: { id, mark in
                // Only up to the notices' own events: later ones come with their notices, in commit order, so a
                // typing notice between two commits reaches subscribers between their events (and not after the
                // interaction's final event, when its streams are already closed).
                guard let noticed = batch.storedRange[id], mark.map({ noticed.upperBound > $0 }) ?? true else { return nil }
                return InteractionEventLog.Range(id: id, after: mark ?? noticed.lowerBound - 1, through: noticed.upperBound)
            }) else { continue }
            for id in ids where hub.subscriberCount(for: id) > 0 {
                publish(NoticeBatch.sequence(batch.steps[id] ?? [], stored: stored[id] ?? []), of: id)
            }
        }
    }

    /// After missed notices: hands every followed interaction's newer events to its subscribers (for one the
    /// dispatcher has no mark for yet, its latest event: a stream behind it fills the hole from the log), with one
    /// log read per ``readLimit`` interactions.
    public func catchUp() async {
        starts.withLock { $0.forgetAll() }
        for ids in Self.reads(of: hub.keys) {
            guard let stored = await read(ids, ranges: { id, mark in
                InteractionEventLog.Range(id: id, after: mark, through: nil)
            }) else { continue }
            for id in ids where hub.subscriberCount(for: id) > 0 { publish(stored[id] ?? [], of: id) }
        }
    }

    /// Most interactions one live-dispatch read covers.
    static let readLimit = 500

    /// `ids` in groups of at most ``readLimit``, one log read each.
    private static func reads(of ids: [UUID]) -> [[UUID]] {
        stride(from: 0, to: ids.count, by: readLimit).map { Array(ids[$0 ..< min($0 + readLimit, ids.count)]) }
    }

    /// One log read for the followed ones among `ids` (`ranges` says what to read for each, given the dispatcher's
    /// mark; nil: nothing), retried with backoff while it fails and any of them is followed: a dropped read could
    /// hold an interaction's final event, and its streams would then never end. Nil when none is followed any more
    /// (their marks are forgotten) or the task is cancelled.
    private func read(_ ids: [UUID], ranges: (UUID, Int64?) -> InteractionEventLog.Range?) async
        -> [UUID: [InteractionStreamEvent]]? {
        var delay = Duration.milliseconds(50)
        while true {
            let followed = ids.filter { hub.subscriberCount(for: $0) > 0 }
            // The marks of these ids only: a copy of all of them would be copied again at the next publish.
            let marks = dispatched.withLock { marks -> [Int64?] in
                if followed.count < ids.count {
                    for id in Set(ids).subtracting(followed) { marks.removeValue(forKey: id) }
                }
                return followed.map { marks[$0] }
            }
            guard !followed.isEmpty else { return nil }
            let wanted = zip(followed, marks).compactMap { ranges($0, $1) }
            do {
                return try await log.events(in: wanted)
            } catch {
                failures.withLock { $0 += 1 }
                onDispatchFailure(error)
                try? await Task.sleep(for: delay)
                if Task.isCancelled { return nil }
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// Shutdown: tells every subscriber to reconnect (a final `reconnect` event — another replica will serve it),
    /// then ends every stream.
    public func finishAll() {
        hub.publishToAll(InteractionStreamEvent.reconnect(.shutdown))
        hub.finishAll()
    }

    /// Publishes `events` (stored ones and typing between them) to `id`'s subscribers; the mark moves to the last
    /// stored one, and a final event ends the interaction's streams.
    private func publish(_ events: [InteractionStreamEvent], of id: UUID) {
        for event in events { hub.publish(event, to: id) }
        if let last = events.last(where: { $0.seq != nil })?.seq {
            dispatched.withLock { $0[id] = max($0[id] ?? last, last) }
        }
        if events.contains(where: \.terminal) {
            hub.finish(id)
            _ = dispatched.withLock { $0.removeValue(forKey: id) }
        }
    }
}
