import Coordination
import Accounts
import Foundation
import Postgres

/// The delivery worker of one process, run as a ``Service``: claims due messages from the outbox (every replica
/// runs one; `SKIP LOCKED` and leases keep them from taking the same message), signs and POSTs each on one of its
/// delivery threads (which keep their connections for the next attempt), and records the attempt. Woken by the outbox trigger's NOTIFY, and by a poll as a backstop (retries fall
/// due without a notice). Hourly, it prunes attempts and finished messages past their retention.
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
    /// Where the posts run; each thread keeps its connections open for the next attempt.
    private let threads: DeliveryThreads
    /// Logs finished attempts, many to a statement when many finish together.
    private let recorder: AttemptRecorder
    /// Guards the attempts in flight in this process.
    private let inFlight = Locked(0)
    /// Guards whether the last claim filled every free slot (so more may be due: a slot coming free wakes the loop).
    private let claimFilledSlots = Locked(false)
    /// Guards the attempts made by this process, by outcome.
    private let outcomes = Locked([String: UInt64]())
    /// Guards the claims made by this process: those that found messages and those that came back empty.
    private let claims = Locked((found: UInt64(0), empty: UInt64(0)))
    /// Guards the notice stream subscribed in `prepare()` until `run()` takes it.
    private let subscription = Locked<AsyncStream<ListenerEvent>?>(nil)

    /// A worker over `pool`; `notices` subscribes to the LISTEN connection (nil without one: polling only), and
    /// `ready` returns once the schema is migrated (the worker claims nothing before).
    public init(pool: PostgresPool, settings: WebhookSettings, log: Log,
                notices: @escaping @Sendable () -> AsyncStream<ListenerEvent>?, ready: @escaping @Sendable () async -> Void) {
        self.ready = ready
        self.outbox = WebhookOutbox(pool: pool)
        self.settings = settings
        self.threads = DeliveryThreads(limit: settings.concurrency)
        let wakeup = Wakeup()
        self.wakeup = wakeup
        // A recorded attempt wakes the loop only when it let a waiting message through: most finish with nothing
        // behind them, and a claim for them would come back empty.
        self.recorder = AttemptRecorder(outbox: outbox, onRelease: { wakeup.signal() })
        self.log = log
        self.notices = notices
    }

    /// Attempts made by this process since it started, by outcome (`delivered`, `http_error`, …).
    public var attemptsByOutcome: [String: UInt64] { outcomes.withLock { $0 } }

    /// Claims made by this process since it started: those that found due messages, and those that found none
    /// (an idle worker makes one per poll interval).
    public var claimsMade: (found: UInt64, empty: UInt64) { claims.withLock { $0 } }

    /// Messages waiting for enabled endpoints, and the age in seconds of the oldest (read from the database).
    public func backlog() async throws -> (depth: Int, oldestSeconds: Double) { try await outbox.backlog() }

    /// Subscribes to notices before the listener delivers any.
    public func prepare() async throws {
        let stream = notices()
        subscription.withLock { $0 = stream }
    }

    /// Delivers until graceful shutdown (then lets the attempts in flight finish) or cancellation.
    public func run() async {
        let stream = subscription.withLock { $0.take() }
        let ready = ready
        guard (try? await cancelWhenGracefulShutdown { await ready() }) != nil, !Task.isCancelled else { return }
        let stopping = Locked(false)
        await withDiscardingTaskGroup { group in
            let followers = Task { [self] in
                await withDiscardingTaskGroup { followers in
                    if let stream {
                        followers.addTask { [wakeup] in
                            for await event in stream {
                                if case .notification(let notice) = event, notice.channel != WebhookStore.channel { continue }
                                wakeup.signal()
                            }
                        }
                    }
                    followers.addTask { [self] in await pruneHourly() }
                }
            }
            try? await withGracefulShutdownHandler {
                await claimLoop(group: &group, stopping: stopping)
            } onGracefulShutdown: { [wakeup] in
                stopping.withLock { $0 = true }
                wakeup.signal()
            }
            followers.cancel()
        }
    }

    /// Claims as many due messages as there are free slots, starts their attempts, and waits for a notice, a queue
    /// released, a slot coming free when the last claim filled them all, or the poll interval. Claims are at least
    /// ``WebhookSettings/claimInterval`` apart: under load, the messages committed meanwhile go in one claim.
    private func claimLoop(group: inout DiscardingTaskGroup, stopping: Locked<Bool>) async {
        var lastClaim: ContinuousClock.Instant?
        while !Task.isCancelled && !stopping.withLock({ $0 }) {
            if let lastClaim, case let since = ContinuousClock.now - lastClaim, since < settings.claimInterval {
                try? await Task.sleep(for: settings.claimInterval - since)
            }
            let free = settings.concurrency - inFlight.withLock { $0 }
            if free > 0 {
                let token = UUID()
                lastClaim = .now
                do {
                    let claimed = try await outbox.claim(limit: free, lease: settings.lease, token: token)
                    claimFilledSlots.withLock { $0 = claimed.count == free }
                    claims.withLock { if claimed.isEmpty { $0.empty += 1 } else { $0.found += 1 } }
                    for message in claimed {
                        inFlight.withLock { $0 += 1 }
                        group.addTask { [self] in
                            await attempt(message, token: token)
                            inFlight.withLock { $0 -= 1 }
                            if claimFilledSlots.withLock({ $0 }) { wakeup.signal() }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    log.warning("webhook claim failed; retrying", ["error": String(describing: error)])
                }
            }
            await wakeup.wait(timeout: settings.pollInterval)
        }
    }

    /// Signs and sends one message, then records the attempt.
    func attempt(_ message: ClaimedMessage, token: UUID) async {
        let startedAt = Date()
        let webhookID = WebhookID.text(message.id)
        let result: AttemptResult
        do {
            let target = try WebhookTarget(message.url, allowPrivate: settings.allowPrivateTargets)
            let timestamp = Int64(startedAt.timeIntervalSince1970)
            let signature = WebhookSignature.header(id: webhookID, timestamp: timestamp, body: message.body,
                                                    secrets: message.secrets)
            result = await WebhookPost.send(to: target, headers: [
                "Content-Type: application/json", "webhook-id: \(webhookID)", "webhook-timestamp: \(timestamp)",
                "webhook-signature: \(signature)",
            ], body: message.body, timeout: settings.timeout, allowPrivate: settings.allowPrivateTargets, on: threads)
        } catch {
            let outcome: AttemptResult.Outcome = error.refusesTheTarget ? .refused : .networkError
            result = AttemptResult(outcome: outcome, status: nil, error: error.description, retryAfterSeconds: nil, latency: .zero)
        }
        outcomes.withLock { $0[result.outcome.rawValue, default: 0] += 1 }
        let retryIn = result.outcome == .delivered ? nil
            : RetryPlan.delay(afterAttempts: message.attempt, schedule: settings.retrySchedule,
                              retryAfter: result.retryAfterSeconds, jitter: Double.random(in: -1 ... 1))
        let record = WebhookOutbox.AttemptRecord(result: result, message: message, token: token, startedAt: startedAt,
                                                 retryIn: retryIn)
        do {
            try await recorder.record(record)
        } catch {
            // The lease runs out and the message is attempted again: at least once.
            log.warning("cannot record a webhook attempt; the message will be attempted again",
                        ["webhook_id": webhookID, "error": String(describing: error)])
            return
        }
        do {
            if let reason = try await outbox.disableIfDue(after: record) {
                log.info("webhook endpoint disabled", ["endpoint_id": message.endpointID.lowercased, "reason": reason])
            }
        } catch {
            log.warning("cannot disable a failing webhook endpoint; the next failure tries again",
                        ["endpoint_id": message.endpointID.lowercased, "error": String(describing: error)])
        }
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
