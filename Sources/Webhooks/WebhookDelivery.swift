import Coordination
import Accounts
import Foundation
import Postgres

/// The delivery worker of one process, run as a ``Service``: claims due messages from the outbox (every replica
/// runs one; `SKIP LOCKED` and leases keep them from taking the same message), signs and POSTs each on its
/// ``DeliveryEngine`` (one thread carrying every POST in flight, keeping their connections for the next attempts),
/// and records the attempt. Woken by the outbox trigger's NOTIFY, and by a poll as a backstop (retries fall due
/// without a notice). Hourly, it prunes attempts and finished messages past their retention. Every decision (when
/// and how much to claim, retries, disabling, shutdown) is the ``DeliveryScheduler``'s; this class carries out its
/// actions.
///
/// Guarantees: at least once — a message is retried until a 2xx, until its schedule is exhausted, or while its
/// endpoint is disabled it waits; a worker that dies mid-attempt loses only its lease. Ordering: per endpoint and
/// interaction, a message is not attempted before the earlier messages of that interaction are delivered or given
/// up. Nothing is promised across interactions or endpoints. At graceful shutdown it stops claiming and lets the
/// attempts in flight finish (each is bounded by the timeout).
public final class WebhookDelivery: Service {
    /// Where the worker reports what an operator should see.
    public struct Log: Sendable {
        /// Notable events (an endpoint disabled).
        public var info: @Sendable (String, [String: String]) -> Void
        /// Failures of the worker itself (the database unreachable), not of deliveries.
        public var warning: @Sendable (String, [String: String]) -> Void

        /// A log with these two sinks.
        public init(info: @escaping @Sendable (String, [String: String]) -> Void,
                    warning: @escaping @Sendable (String, [String: String]) -> Void) {
            self.info = info
            self.warning = warning
        }
    }

    let outbox: WebhookOutbox
    let settings: WebhookSettings
    let log: Log
    let notices: @Sendable () -> AsyncStream<ListenerEvent>?
    let ready: @Sendable () async -> Void
    private let wakeup: Wakeup
    /// Where the POSTs run; it keeps its connections open for the next attempts.
    let engine = DeliveryEngine()
    /// Where endpoint names are resolved (blocking) before their POSTs start.
    let resolvers: ResolverThreads
    /// Logs finished attempts, many to a statement when many finish together.
    let recorder: AttemptRecorder
    /// Guards the endpoint URLs parsed so far (a URL's parse depends on nothing else; it was 3 % of a delivery's
    /// CPU when made for every attempt). Names are still resolved and checked at every attempt.
    let targets = Locked([String: WebhookTarget]())
    /// Guards the worker's state: the scheduler (every decision: claims, slots, retries, shutdown, and the
    /// counters) and the notice stream subscribed in `prepare()` until `run()` takes it. A lock rather than an actor:
    /// graceful shutdown and the metrics ask synchronously.
    private let state: Locked<State>

    private struct State {
        var scheduler: DeliveryScheduler<ContinuousClock.Instant>
        var subscription: AsyncStream<ListenerEvent>?
    }

    /// A worker over `pool`; `notices` subscribes to the LISTEN connection (nil without one: polling only), and
    /// `ready` returns once the schema is migrated (the worker claims nothing before).
    public init(pool: PostgresPool, settings: WebhookSettings, log: Log,
                notices: @escaping @Sendable () -> AsyncStream<ListenerEvent>?, ready: @escaping @Sendable () async -> Void) {
        self.ready = ready
        self.outbox = WebhookOutbox(pool: pool)
        self.settings = settings
        self.resolvers = ResolverThreads(limit: settings.concurrency)
        let wakeup = Wakeup()
        self.wakeup = wakeup
        let state = Locked(State(scheduler: DeliveryScheduler(configuration: .init(settings)), subscription: nil))
        self.state = state
        // A recorded attempt wakes the loop only when it let a waiting message through: most finish with nothing
        // behind them, and a claim for them would come back empty.
        self.recorder = AttemptRecorder(outbox: outbox, onRelease: {
            if state.withLock({ $0.scheduler.messagesMayBeDue() }) == .wake { wakeup.signal() }
        })
        self.log = log
        self.notices = notices
    }

    /// What this process's worker has done since it started: attempts by outcome, claims by result.
    public var counters: DeliveryCounters { state.withLock { $0.scheduler.counters } }

    /// Attempts made by this process since it started, by outcome (an outcome absent has none).
    public var attemptsByOutcome: [AttemptResult.Outcome: UInt64] { counters.attempts }

    /// Claims made by this process since it started: those that found due messages, and those that found none
    /// (an idle worker makes one per poll interval).
    public var claimsMade: (found: UInt64, empty: UInt64) {
        let counters = counters
        return (counters.claimsWithMessages, counters.emptyClaims)
    }

    /// Messages waiting for enabled endpoints, and the age in seconds of the oldest (read from the database).
    public func backlog() async throws -> (depth: Int, oldestSeconds: Double) { try await outbox.backlog() }

    /// Subscribes to notices before the listener delivers any.
    public func prepare() async throws {
        let stream = notices()
        state.withLock { $0.subscription = stream }
    }

    /// Delivers until graceful shutdown (then lets the attempts in flight finish) or cancellation.
    public func run() async {
        let stream = state.withLock { $0.subscription.take() }
        let ready = ready
        guard (try? await cancelWhenGracefulShutdown { await ready() }) != nil, !Task.isCancelled else { return }
        await withDiscardingTaskGroup { followers in
            // Notices and the hourly pruning follow the loop; they end once its attempts are over.
            if let stream {
                followers.addTask { [self] in
                    for await event in stream {
                        if case .notification(let notice) = event, notice.channel != WebhookStore.channel { continue }
                        wake(schedule { $0.messagesMayBeDue() })
                    }
                }
            }
            followers.addTask { [self] in await pruneHourly() }
            await withDiscardingTaskGroup { attempts in
                try? await withGracefulShutdownHandler {
                    await claimLoop(group: &attempts)
                } onGracefulShutdown: { [self] in
                    wake(schedule { $0.shutdownRequested() })
                }
            }
            followers.cancelAll()
        }
        engine.stop()
        resolvers.stop()
    }

    /// Carries out the scheduler's loop actions: claims (starting an attempt per message claimed), paces claims,
    /// waits for a wakeup or the poll interval, until the scheduler says stop or the task is cancelled.
    private func claimLoop(group: inout DiscardingTaskGroup) async {
        var action = schedule { $0.loopReady(at: .now) }
        var pivot = QueueKey.first // where the next claim starts its walk over the queues
        while !Task.isCancelled {
            switch action {
            case .stop:
                return
            case .pace(let deadline):
                try? await Task.sleep(until: deadline, clock: .continuous)
            case .wait(let deadline):
                await wakeup.wait(timeout: max(.zero, deadline - .now))
            case .claim(let limit, let lease):
                let token = RandomUUID.make()
                do {
                    let claimed = try await outbox.claim(limit: limit, lease: lease, token: token, after: pivot)
                    pivot = QueueKey.pivot(after: pivot, claimed: claimed.map(\.queue))
                    action = schedule { $0.claimed(claimed.count, at: .now) }
                    for message in claimed {
                        // On the engine's thread, where its POST runs and its answer arrives.
                        group.addTask(executorPreference: engine) { [self] in
                            await attempt(message, token: token)
                            wake(schedule { $0.attemptFinished() })
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    log.warning("webhook claim failed; retrying", ["error": String(describing: error)])
                    action = schedule { $0.claimFailed(at: .now) }
                }
                continue
            }
            action = schedule { $0.loopReady(at: .now) }
        }
    }

    /// Tells the scheduler of an event, under the lock.
    func schedule<Action: Sendable>(_ event: (inout DeliveryScheduler<ContinuousClock.Instant>) -> Action) -> Action {
        state.withLock { event(&$0.scheduler) }
    }

    private func wake(_ wake: DeliveryScheduler<ContinuousClock.Instant>.Wake) {
        if wake == .wake { wakeup.signal() }
    }

    private func pruneHourly() async {
        while !Task.isCancelled {
            do { try await outbox.prune(olderThan: settings.retention) } catch {
                if Task.isCancelled { return }
                log.warning("webhook pruning failed", ["error": String(describing: error)])
            }
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}
