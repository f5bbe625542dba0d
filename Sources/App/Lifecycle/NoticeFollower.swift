import Accounts
import Coordination
import Feeds
import Foundation
import Interactions
import Postgres

/// The LISTEN connection and what follows it, as one service: change notices from every replica (this one
/// included) applied to the interaction event streams and to revoked sessions' streams — each channel by one task
/// of its own, so each keeps the notices' order. (Feed notices are applied by the listener's inline hook.) At graceful shutdown the listener stops, which
/// ends the notice streams, and `run()` returns once every follower is done.
struct NoticeFollower: Service {
    private typealias Subscriptions = (interactions: ListenerRuns, revocations: AsyncStream<ListenerEvent>)
    let listener: PostgresListener
    let services: Services
    let logger: Logger
    /// The executor the followers prefer (the reactor, whose thread reads the notices), or nil.
    let executor: (any TaskExecutor)?
    /// Guards the notice streams subscribed in `prepare()` until `run()` takes them.
    private let subscriptions = Locked<Subscriptions?>(nil)

    init(listener: PostgresListener, services: Services, logger: Logger, executor: (any TaskExecutor)? = nil) {
        self.listener = listener
        self.services = services
        self.logger = logger
        self.executor = executor
    }

    /// Subscribes before the listener starts, so no notice falls before a follower exists.
    func prepare() async throws {
        let streams = (listener.runs(on: [InteractionStore.channel]),
                       listener.notifications(on: [AccountStore.revocationChannel]))
        subscriptions.withLock { $0 = streams }
        listener.start()
    }

    func run() async {
        guard let (interactionNotices, revocationNotices) = subscriptions.withLock({ $0.take() }) else { return }
        let interactions = services.interactionEvents
        let inbox = services.inbox
        let accounts = services.accounts
        let tokens = services.tokens
        let logger = logger
        let listener = listener
        // After a reconnect, live streams' sessions are checked in one query, for revocations whose notices were
        // missed while the listener was away. The token cache goes first: it may hold a token revoked meanwhile (its
        // notice would have dropped it), and a stream opened with it after the check would outlive the revocation.
        let endMissedRevocations: @Sendable () async -> Void = {
            await tokens.forgetAll()
            do {
                let live = Array(Set(interactions.sessionsWithStreams + inbox.sessionsWithStreams))
                for session in try await accounts.endedSessions(among: live) {
                    interactions.endStreams(ofSession: session)
                    inbox.endStreams(ofSession: session)
                }
            } catch {
                logger.warning("cannot check live streams' sessions", ["error": String(describing: error)])
            }
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                try? await gracefulShutdown()
                await listener.stop()
            }
            group.addTask(preferring: executor) {
                // The inbox reads a batch of whatever became visible: it needs no more of a notice than that it came.
                await Self.followInRuns(interactionNotices, apply: { notices in
                    inbox.noticed(notices)
                    await interactions.handle(notices: notices)
                }, afterReconnect: {
                    // Revocations missed meanwhile end their streams first: the catch-up must not hand a revoked
                    // session what was written while the listener was away.
                    await endMissedRevocations()
                    inbox.noticed()
                    await interactions.catchUp()
                })
            }
            // A revoked session's streams end on every replica. (Revocations missed while the listener was away are
            // found by the interactions' follower after a reconnect, before its catch-up.) On the same executor as the
            // interactions' follower: the listener's thread wakes both, in the order their notices came.
            group.addTask(preferring: executor) {
                await Self.follow(revocationNotices, apply: { payload in
                    guard let session = UUID(uuidString: payload) else { return }
                    interactions.endStreams(ofSession: session)
                    inbox.endStreams(ofSession: session)
                    // The revoked token may sit in this replica's cache: drop it (the cache knows tokens, not
                    // sessions, so all of it), and REST calls with it are refused now rather than within 5 s.
                    await tokens.forgetAll()
                })
            }
        }
    }

    /// Hands the notices of `events` (one channel's: `prepare()` subscribes each follower to its own) to `apply` in
    /// runs, in order: while one run is applied, the notices arriving meanwhile gather and go together in the next
    /// (so a busy channel costs one `apply` for many notices, and an idle one applies each notice at once). `afterReconnect` runs in its place in the order, between the notices
    /// before the reconnection and those after it. The listener's task hands each batch straight to this one
    /// (``ListenerRuns``): no task stands between them.
    private static func followInRuns(_ events: ListenerRuns,
                                     apply: @Sendable ([String]) async -> Void,
                                     afterReconnect: @Sendable () async -> Void) async {
        while let arrived = await events.next() {
            var run: [String] = []
            for event in arrived {
                switch event {
                case .notification(let notice):
                    run.append(notice.payload)
                case .reconnected:
                    if !run.isEmpty { await apply(run) }
                    run = []
                    await afterReconnect()
                case .connected:
                    continue
                }
            }
            if !run.isEmpty { await apply(run) }
        }
    }

    /// Hands each notice of `events` (one channel's) to `apply`, in order.
    private static func follow(_ events: AsyncStream<ListenerEvent>, apply: @Sendable (String) async -> Void) async {
        for await event in events {
            if case .notification(let notice) = event { await apply(notice.payload) }
        }
    }
}
