import Coordination
import Foundation
import Postgres

/// Keeps this replica's part of presence: every tick it renews the leases of the agents holding inbox streams here,
/// ends those of agents whose last stream here closed, and sweeps every agent's status (each change announced once,
/// to every replica's inbox streams). Stopping ends this replica's leases, so its agents' grace starts then.
public final class PresenceKeeper: Service {
    private let store: PresenceStore
    private let inbox: InboxFeed
    /// How long an agent stays online after its last inbox stream ends (`PRESENCE_GRACE_SECONDS`).
    public let grace: Duration
    private let tick: Duration
    private let lease: Duration
    /// This process among the replicas (its leases' owner).
    let replica = UUID()
    private let onFailure: @Sendable (any Error) -> Void
    private let ready: @Sendable () async -> Void
    private let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    /// Presence over `pool` for the agents of `inbox`'s streams. A lease lasts `lease` and is renewed every `tick`,
    /// so a replica that dies leaves its agents online for at most `lease` + `grace`.
    public init(pool: PostgresPool, inbox: InboxFeed, grace: Duration = .seconds(30), tick: Duration = .seconds(1),
                lease: Duration = .seconds(4), ready: @escaping @Sendable () async -> Void = {},
                onFailure: @escaping @Sendable (any Error) -> Void = { _ in }) {
        store = PresenceStore(pool: pool)
        self.inbox = inbox
        self.grace = grace
        self.tick = tick
        self.lease = lease
        self.ready = ready
        self.onFailure = onFailure
        inbox.onWatchersChanged { [wake] in wake.yield() }
    }

    /// Renew and sweep now rather than at the next tick (an agent chose a status, or opened its first stream).
    public func poke() { wake.yield() }

    /// Renews and sweeps every tick (and when poked) until graceful shutdown, then ends this replica's leases.
    public func run() async {
        let ready = ready
        // Nothing touches the database before the schema is there, nor once shutdown began first.
        guard (try? await cancelWhenGracefulShutdown { await ready() }) != nil, !Task.isCancelled else { return }
        var held: Set<InboxFeed.Agent> = []
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [wake, tick] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: tick)
                    wake.yield()
                }
            }
            group.addTask { [wake] in
                try? await gracefulShutdown()
                wake.finish()
            }
            // Failed rounds in a row: an outage is told when it starts and then once a minute, not every second.
            var failures = 0
            for await _ in wakeups {
                do {
                    held = try await round(held: held)
                    failures = 0
                } catch {
                    failures += 1
                    if failures == 1 || failures.isMultiple(of: 60) { onFailure(error) }
                }
            }
            group.cancelAll()
        }
        // Shutting down: this replica's agents reconnect elsewhere; their grace starts now.
        do { _ = try await round(held: held, stopping: true) } catch { onFailure(error) }
    }

    /// One renewal and sweep; returns the agents whose leases this replica now holds.
    private func round(held: Set<InboxFeed.Agent>, stopping: Bool = false) async throws -> Set<InboxFeed.Agent> {
        let connected = stopping ? [] : Set(inbox.connectedAgents)
        let released = held.subtracting(connected)
        try await store.renew(connected.map { ($0.tenant, $0.agent) }, released: released.map { ($0.tenant, $0.agent) },
                              replica: replica, lease: lease)
        if !stopping {
            _ = try await store.sweep(grace: grace, channel: InteractionStore.channel)
            try await drain()
        }
        return connected
    }

    /// Most waiting interactions one round assigns (the next round goes on).
    static let drainLimit = 500

    /// Assigns waiting interactions to agents with room, one transaction each, until none is left or the limit.
    private func drain() async throws {
        let pool = store.pool
        for _ in 0 ..< PresenceKeeper.drainLimit {
            let assigned = try await pool.withTransaction { connection in
                try await InteractionStore().drainOne(on: connection)
            }
            if assigned == nil { return }
        }
    }

    /// Records the status `agent` chose and sweeps at once; returns the agent as `GET /v1/agents` shows it.
    public func choose(_ status: AgentStatus, tenant: UUID, agent: String) async throws -> AgentSummary {
        try await store.choose(status, tenant: tenant, agent: agent)
        _ = try await store.sweep(grace: grace, channel: InteractionStore.channel)
        return try await store.agents(of: tenant).first { $0.agentID == agent }
            ?? AgentSummary(agentID: agent, status: .offline, openInteractions: 0, lastSeenAt: nil)
    }

    /// The tenant's agents.
    public func agents(of tenant: UUID) async throws -> [AgentSummary] { try await store.agents(of: tenant) }

    /// How many of the tenant's agents are online.
    public func onlineCount(of tenant: UUID) async throws -> Int64 { try await store.onlineCount(of: tenant) }
}
