import Accounts
import Coordination
import Foundation
import HTTPServer
import Postgres

/// The agents' live inbox in this process: one dispatcher that turns change notices (from every replica) into
/// batches of changed interactions, one read per batch for all of a tenant's watchers, and hands each inbox stream
/// (an ``InboxWatcher``) the summaries its filter takes.
///
/// Batches follow a chain of snapshots (see ``InboxPosition``): each batch is read in one read-only repeatable-read
/// transaction, and holds the changes that became visible since the previous batch's snapshot. Streams start inside
/// a batch too — their snapshot or resume is read in the batch's transaction — so a stream joins the chain exactly
/// where its opening left it: nothing between the two is lost or sent twice. Missed notices cost nothing but
/// latency: the next batch reads whatever became visible, however it was announced.
public final class InboxFeed: Service {
    /// A stream waiting for its opening, read in the next batch.
    private struct Start {
        let watcherID: UInt64
        let tenant: UUID
        let agent: String
        let filter: InboxFilter
        /// The client's `Last-Event-ID`, opened by the dispatcher (which holds the key).
        let lastEventID: String?
        let continuation: CheckedContinuation<(opening: [UInt8], watcher: InboxWatcher), any Error>
    }

    /// The dispatcher's state.
    private struct State {
        var watchers: [UUID: [UInt64: InboxWatcher]] = [:]
        var starts: [Start] = []
        /// The dispatcher holds a snapshot from a batch it read (a chain to continue): a notice must reach it even with
        /// nobody watching, so that it lets the chain go. False once it has: notices with no watcher and no start
        /// then need no batch, and do not wake it.
        var chainHeld = false
        /// Notices that woke the dispatcher (for tests).
        var noticeWakes = 0
        var nextID: UInt64 = 0
        var stopped = false
        /// Told when an agent's first stream opens or its last closes here (presence).
        var watchersChanged: (@Sendable () -> Void)?
    }

    /// An agent of a tenant.
    public struct Agent: Hashable, Sendable {
        /// The tenant.
        public let tenant: UUID
        /// The agent's user id.
        public let agent: String
    }

    private let pool: PostgresPool
    private let store = InboxStore()
    /// The key positions are sealed with: given, or kept in the database (see ``InboxStore/positionKey(on:)``).
    private let positionKey: [UInt8]?
    /// Returns once the schema is in place.
    private let ready: @Sendable () async -> Void
    /// Guards the watchers by tenant, the streams waiting to start, and the id counter.
    private let state = Locked(State())
    /// Guards the credential behind every inbox stream (cap, revocation, expiry).
    private let leases = Locked(StreamLeases())
    private let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    /// Most inbox streams one user may hold in this process.
    public let streamsPerPrincipal: Int
    private let heartbeat: Duration
    /// How long a client should wait before reconnecting (the stream's `retry:`).
    public let reconnectDelay: Duration
    private let onFailure: @Sendable (any Error) -> Void
    /// How long changes are kept for clients to resume from: a position older than that is refused (400) and its
    /// client starts over from a snapshot.
    public static let resumeWindow = Duration.seconds(24 * 3600)

    /// Deletes changes recorded longer ago than `age`, 10,000 per statement (every replica runs this each minute;
    /// deleting the same rows twice is harmless); returns how many went.
    public func pruneChanges(olderThan age: Duration) async throws -> Int {
        var total = 0
        let store = self.store
        while true {
            let gone = try await pool.withConnection { try await store.prune(olderThan: age, limit: 10_000, on: $0) }
            total += gone
            if gone < 10_000 { return total }
        }
    }

    /// Most streams one batch opens.
    static let startsPerBatch = 32

    /// The shortest time between two batches: what a change may wait for company.
    static let batchInterval = Duration.milliseconds(5)

    /// Interactions read per query of a snapshot.
    static let snapshotPage = 500

    /// A feed reading through `pool` once `ready` returns, its positions sealed under `positionKey` (32 bytes, the
    /// same on every replica; nil: a key kept in the database, made by the first replica that needs one).
    public init(pool: PostgresPool, positionKey: [UInt8]? = nil, streamsPerPrincipal: Int = 5,
                heartbeat: Duration = .seconds(15), reconnectDelay: Duration = .seconds(2),
                ready: @escaping @Sendable () async -> Void = {},
                onFailure: @escaping @Sendable (any Error) -> Void = { _ in }) {
        precondition(positionKey.map { $0.count == 32 } ?? true, "inbox position keys are 32 bytes")
        self.pool = pool
        self.positionKey = positionKey
        self.ready = ready
        self.streamsPerPrincipal = streamsPerPrincipal
        self.heartbeat = heartbeat
        self.reconnectDelay = reconnectDelay
        self.onFailure = onFailure
    }

    /// Something changed (a notice on the interactions channel, or the listener reconnected): read a batch. Agents'
    /// status changes among `notices` go to their tenants' streams at once.
    public func noticed(_ notices: [String] = []) {
        for notice in notices where notice.hasPrefix("agent:") {
            guard let change = AgentStatusChange(payload: notice) else { continue }
            let event = InboxWatcher.statusEvent(change)
            for watcher in watchers(where: { $0.tenant == change.tenantID }) { watcher.say(event, key: .status(change.agentID)) }
        }
        // With nobody watching here, a notice would wake the dispatcher only for it to find nothing to read (and, busy,
        // to wait out its batch interval first): every write paid for that, on a replica without inbox streams.
        let needed = state.withLock { state in
            let needed = !state.watchers.isEmpty || !state.starts.isEmpty || state.chainHeld
            if needed { state.noticeWakes += 1 }
            return needed
        }
        if needed { wake.yield() }
    }

    /// How many notices woke the dispatcher (the others found nobody watching and no chain to let go).
    var noticeWakes: Int { state.withLock { $0.noticeWakes } }

    /// The agents holding inbox streams here.
    public var connectedAgents: [Agent] {
        state.withLock { state in
            Array(Set(state.watchers.flatMap { tenant, watchers in watchers.values.map { Agent(tenant: tenant, agent: $0.agent) } }))
        }
    }

    /// Calls `action` whenever an agent's first stream opens or its last one closes here.
    func onWatchersChanged(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.watchersChanged = action }
    }

    /// Inbox streams open in this process.
    public var watcherCount: Int { state.withLock { $0.watchers.values.reduce(0) { $0 + $1.count } } }

    /// Opens an inbox stream for `principal` (an agent's session): its opening bytes — the snapshot of what is in
    /// view and `snapshot-end`, or, from `lastEventID`, every interaction changed since, oldest change first — and
    /// the watcher that then receives live changes. Throws ``InteractionError/unknownInboxPosition`` for a position
    /// this tenant's streams were not given, ``InteractionError/streamLimit(_:)`` over the cap.
    func open(for principal: Principal, agent: String, filter: InboxFilter,
              lastEventID: String?) async throws -> (opening: [UInt8], watcher: InboxWatcher) {
        let tenant = principal.tenantID
        if let lastEventID, lastEventID.utf8.count > 2048 { throw InteractionError.unknownInboxPosition }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        if let lease = StreamLeases.Lease(following: tenant, for: principal) {
            let limit = streamsPerPrincipal
            try leases.withLock({ $0.add(id, lease, limit: limit) }).check(limit: limit, lease: lease)
        }
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let accepted = state.withLock { state -> Bool in
                    guard !state.stopped else { return false }
                    state.starts.append(Start(watcherID: id, tenant: tenant, agent: agent, filter: filter,
                                              lastEventID: lastEventID, continuation: continuation))
                    return true
                }
                if accepted { wake.yield() } else { continuation.resume(throwing: CancellationError()) }
            }
        } catch {
            leases.withLock { $0.remove(id) }
            throw error
        }
    }

    /// The stream of `watcher` ended (its client went away, or it was ended): it takes no more batches.
    func close(_ watcher: InboxWatcher) {
        let changed = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.watchers[watcher.tenant]?.removeValue(forKey: watcher.id) != nil else { return nil }
            if state.watchers[watcher.tenant]?.isEmpty == true { state.watchers.removeValue(forKey: watcher.tenant) }
            let stillHere = state.watchers[watcher.tenant]?.values.contains { $0.agent == watcher.agent } ?? false
            return stillHere ? nil : state.watchersChanged
        }
        leases.withLock { $0.remove(watcher.id) }
        changed?()
    }

    /// Ends at once every inbox stream of `session` (revoked), each with a `reconnect` event.
    public func endStreams(ofSession session: UUID) {
        let ids = Set(leases.withLock { $0.revoke(session) }.map(\.id))
        for watcher in watchers(where: { ids.contains($0.id) }) { watcher.end(reason: "session_revoked") }
    }

    /// Sessions holding inbox streams here.
    public var sessionsWithStreams: [UUID] { leases.withLock { $0.sessions } }

    private func watchers(where include: (InboxWatcher) -> Bool) -> [InboxWatcher] {
        state.withLock { state in state.watchers.values.flatMap { $0.values.filter(include) } }
    }

    /// Runs the dispatcher, the heartbeat and the expiry sweep until graceful shutdown, then ends every stream
    /// (each with `reconnect`: another replica serves it) and fails streams still starting.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.dispatch() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.heartbeat)
                    for watcher in self.watchers(where: { _ in true }) { watcher.heartbeat() }
                    // A notice that never came (it cannot be missed, but a batch is cheap) is caught here.
                    self.wake.yield()
                }
            }
            group.addTask { [ready] in
                guard (try? await cancelWhenGracefulShutdown { await ready() }) != nil else { return }
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(60))
                    if Task.isCancelled { return }
                    do { _ = try await self.pruneChanges(olderThan: InboxFeed.resumeWindow) } catch { self.onFailure(error) }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let expired = Set(self.leases.withLock { $0.expired(at: Date()) }.map(\.id))
                    if expired.isEmpty { continue }
                    for watcher in self.watchers(where: { expired.contains($0.id) }) { watcher.end(reason: "session_expired") }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        let (watchers, starts) = state.withLock { state in
            state.stopped = true
            defer { state.starts = []; state.watchers = [:] }
            return (state.watchers.values.flatMap(\.values), state.starts)
        }
        for start in starts { start.continuation.resume(throwing: CancellationError()) }
        for watcher in watchers { watcher.end(reason: "shutdown") }
    }

    /// The dispatcher: one batch per wakeup, until cancelled.
    private func dispatch() async {
        let ready = ready
        // Nothing touches the database before the schema is there, nor once shutdown began first.
        guard (try? await cancelWhenGracefulShutdown { await ready() }) != nil, !Task.isCancelled else { return }
        guard let codec = await positionCodec() else { return }
        var chain: XidSnapshot?
        var delay = Duration.milliseconds(50)
        var lastBatch = ContinuousClock.now - InboxFeed.batchInterval
        var failures = 0
        for await _ in wakeups {
            // Under a stream of changes, batches come at most every `batchInterval`: the changes of that time share
            // one read (an idle feed reads at once).
            let due = lastBatch + InboxFeed.batchInterval
            if due > .now { try? await Task.sleep(until: due) }
            lastBatch = .now
            // A batch opens at most `startsPerBatch` streams: the rest wait for the next one, so that a crowd coming
            // back at once (each opening with a snapshot of its view) never holds live changes up for long.
            let (starts, tenants, more) = state.withLock { state in
                let taken = Array(state.starts.prefix(InboxFeed.startsPerBatch))
                state.starts.removeFirst(taken.count)
                // Under the same lock as the taking: a notice from here on wakes the dispatcher again if this batch
                // will hold a chain (its changes may have come after the batch's snapshot).
                state.chainHeld = !taken.isEmpty || !state.watchers.isEmpty
                return (taken, Array(state.watchers.keys), !state.starts.isEmpty)
            }
            if more { wake.yield() }
            if starts.isEmpty && tenants.isEmpty {
                chain = nil
                continue
            }
            do {
                chain = try await batch(after: chain, tenants: tenants, starts: starts, codec: codec)
                delay = .milliseconds(50)
                failures = 0
            } catch {
                // An outage is told when it starts and then every 30th retry (about a minute), not at every one.
                failures += 1
                if failures == 1 || failures.isMultiple(of: 30) { onFailure(error) }
                // Streams starting now are told (503); live streams wait for the next batch, which reads all of it.
                for start in starts { start.continuation.resume(throwing: error) }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
                wake.yield()
            }
            if Task.isCancelled { break }
        }
    }

    /// What a stream starting in a batch read: its events, or why it cannot start.
    private enum Opening {
        case snapshot([InboxSummary])
        case resumed([InboxStore.Change], from: InboxPosition)
        case refused(InteractionError)
    }

    /// The codec of the configured key, or of the database's (retried until it can be read); nil when cancelled.
    private func positionCodec() async -> InboxPositionCodec? {
        if let positionKey { return InboxPositionCodec(key: positionKey) }
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let store = self.store
                let key = try await pool.withConnection { try await store.positionKey(on: $0) }
                return InboxPositionCodec(key: key)
            } catch {
                onFailure(error)
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
        return nil
    }

    /// Reads one batch at a new snapshot — the changes since `previous` for the watched `tenants`, and the openings
    /// of `starts` — then hands them out; returns the new snapshot.
    private func batch(after previous: XidSnapshot?, tenants: [UUID], starts: [Start],
                       codec: InboxPositionCodec) async throws -> XidSnapshot {
        let store = self.store
        // A position this service did not seal for the tenant is refused before anything is read for it.
        let positions = starts.map { start in start.lastEventID.map { codec.decode($0, tenant: start.tenant) } }
        let (now, live, openings) = try await pool.withTransaction { connection in
            let now = try await store.beginBatch(on: connection)
            var live: [InboxStore.Change] = []
            if let previous { live = try await store.changes(of: tenants, since: InboxPosition(previous), on: connection) }
            var openings: [Opening] = []
            let pruned = positions.contains { $0 != nil } ? try await store.prunedBelow(on: connection) : nil
            for (start, position) in zip(starts, positions) {
                if let position {
                    guard let position else {
                        openings.append(.refused(.unknownInboxPosition))
                        continue
                    }
                    // A position from beyond this database's present was not made by it (a restore, another cluster).
                    guard position.highestXmax <= now.xmax else {
                        openings.append(.refused(.unknownInboxPosition))
                        continue
                    }
                    // Older than the changes kept: some it lacks may be gone. Its client starts over.
                    if let pruned, pruned >= position.coveredBelow {
                        openings.append(.refused(.unknownInboxPosition))
                        continue
                    }
                    openings.append(.resumed(try await store.changes(of: [start.tenant], since: position, on: connection),
                                             from: position))
                } else {
                    openings.append(.snapshot(try await InboxFeed.snapshot(of: start, store: store, on: connection)))
                }
            }
            return (now, live, openings)
        }
        if let previous { deliver(live, from: previous, to: now, codec: codec) }
        for (start, opening) in zip(starts, openings) { begin(start, with: opening, at: now, codec: codec) }
        return now
    }

    /// Every interaction in view of `start`'s filter, newest first, a page at a time.
    private static func snapshot(of start: Start, store: InboxStore, on connection: PostgresConnection) async throws -> [InboxSummary] {
        var all: [InboxSummary] = []
        let states = InteractionState.allCases.filter(start.filter.states.contains)
        while true {
            let page = try await store.snapshot(
                of: start.tenant, states: states, agent: start.filter.assignment == .me ? start.agent : nil,
                unassigned: start.filter.assignment == .none, limit: snapshotPage,
                after: all.last.map { ($0.createdAt, $0.id) }, on: connection)
            all += page
            if page.count < snapshotPage { return all }
        }
    }

    /// Offers a batch read at `now` (changes since `previous`) to every watcher of each tenant in it.
    private func deliver(_ changes: [InboxStore.Change], from previous: XidSnapshot, to now: XidSnapshot,
                         codec: InboxPositionCodec) {
        guard !changes.isEmpty else { return }
        let byTenant = Dictionary(grouping: changes, by: \.tenantID)
        let before = InboxPosition(previous)
        for (tenant, changes) in byTenant {
            let watchers = state.withLock { Array(($0.watchers[tenant] ?? [:]).values) }
            guard !watchers.isEmpty else { continue }
            // Positions sealed and events encoded once per batch, shared by the tenant's watchers.
            let renderer = InboxBatchRenderer(changes) { index, isLast in
                codec.encode(before.afterChange(numbered: changes[index].seq, isLast: isLast, at: now), tenant: tenant)
            }
            for watcher in watchers { watcher.offer(changes, renderer: renderer) }
        }
    }

    /// Opens `start`'s stream with what its batch read at `now`, and attaches its watcher (it takes the next batch).
    private func begin(_ start: Start, with opening: Opening, at now: XidSnapshot, codec: InboxPositionCodec) {
        var bytes = Array("retry: \(reconnectDelay.wholeMilliseconds)\n\n".utf8)
        let watcher: InboxWatcher
        switch opening {
        case .refused(let error):
            start.continuation.resume(throwing: error)  // `open` releases the lease
            return
        case .snapshot(let summaries):
            for summary in summaries {
                let entry = InboxEntry(interaction: summary.interaction(for: start.agent), lastMessage: summary.lastMessage,
                                       inView: true)
                bytes += InboxWatcher.event(entry, id: nil)
            }
            let end = codec.encode(InboxPosition(now), tenant: start.tenant)
            bytes += ServerSentEvent(id: end, event: "snapshot-end", data: #"{"count":\#(summaries.count)}"#).encoded()
            watcher = InboxWatcher(id: start.watcherID, tenant: start.tenant, agent: start.agent, filter: start.filter,
                                   view: InboxView(shown: Set(summaries.map(\.id.lowercased)), exact: true))
        case .resumed(let changes, let position):
            watcher = InboxWatcher(id: start.watcherID, tenant: start.tenant, agent: start.agent, filter: start.filter,
                                   view: InboxView(exact: false))
            watcher.offer(changes, renderer: InboxBatchRenderer(changes) { index, isLast in
                codec.encode(position.afterChange(numbered: changes[index].seq, isLast: isLast, at: now), tenant: start.tenant)
            })
            if let waiting = watcher.take().bytes { bytes += waiting }
        }
        let changed = state.withLock { state -> (@Sendable () -> Void)? in
            let first = !(state.watchers[start.tenant]?.values.contains { $0.agent == start.agent } ?? false)
            state.watchers[start.tenant, default: [:]][start.watcherID] = watcher
            return first ? state.watchersChanged : nil
        }
        changed?()
        start.continuation.resume(returning: (bytes, watcher))
    }
}
