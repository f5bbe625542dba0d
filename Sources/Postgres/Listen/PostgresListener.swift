import CLibPQ
import Coordination

/// One dedicated `LISTEN` connection, outside any pool, that carries cross-replica events to this process.
///
/// Create one per process, ``start()`` it, and consume ``notifications()``: every stream begins with `.connected`
/// once the listener listens, then delivers `.notification`s in the order their transactions committed. When the
/// connection breaks (server restart, `pg_terminate_backend`, network) the listener reconnects by itself, waiting
/// `reconnectDelay`, doubling after each failed attempt up to 5 s, re-issues `LISTEN`, and sends `.reconnected`.
/// Notifications sent while it was disconnected are lost: on `.connected` and `.reconnected` a consumer reloads
/// what it needs from the source of truth (the database), then applies the notifications that follow.
///
/// Writers do not use this type. They send through the normal pool, inside the transaction that made the change,
/// with bound parameters — `SELECT pg_notify($1, $2)` or ``PostgresConnection/notify(channel:payload:)`` — so
/// the notification is delivered if and only if the transaction commits. Payloads are limited to 8,000 bytes;
/// send an identifier and let the consumer read the rest.
///
/// A half-open TCP connection (peer gone without a reset) is only noticed through TCP keepalives: for remote
/// servers, set `keepalives_idle`, `keepalives_interval` and `keepalives_count` (or `tcp_user_timeout`) in the
/// connection string. The loop keeps the listener alive until ``stop()``; always call it.
public final class PostgresListener: Sendable {
    /// Where the listening connection goes.
    public let configuration: PostgresConfiguration
    /// The channels listened on, validated and without duplicates, in the order given.
    public let channels: [String]
    /// The pause before the first reconnection attempt; it doubles after each failed attempt, up to 5 s.
    public let reconnectDelay: Duration
    /// After this long without a notification, a round trip checks that the connection is alive (a dead one is
    /// then noticed within the statement deadline, and the listener reconnects and reports `.reconnected`).
    public let livenessInterval: Duration
    /// Guards the loop task, the subscribers' continuations, and the connection status.
    let state = Locked(ListenerState())
    /// Sees each batch of notifications and each change of the connection first, on the listener's own task,
    /// before any stream does.
    let inline: (@Sendable (ListenerInlineEvent) -> Void)?

    /// Describes a listener; nothing is contacted until ``start()``.
    ///
    /// Channel names are spliced into `LISTEN` (which takes no parameters), so each must match
    /// `[a-z_][a-z0-9_]*` and be at most 63 characters; otherwise, or with no channels, this throws `.misuse`.
    ///
    /// `inline`, when given, is called with each batch of notifications as soon as it is read, and whenever the
    /// listener starts or stops listening, before the streams hear of it — for work that must not wait for a
    /// consumer task to be scheduled (marking caches stale, say). It must be quick and must never block.
    public init(
        configuration: PostgresConfiguration, channels: [String], reconnectDelay: Duration = .milliseconds(500),
        livenessInterval: Duration = .seconds(10), inline: (@Sendable (ListenerInlineEvent) -> Void)? = nil
    ) throws(PostgresError) {
        guard !channels.isEmpty else { throw PostgresError(.misuse, "a listener needs at least one channel") }
        var unique: [String] = []
        for channel in channels where !unique.contains(channel) {
            try ChannelName.validate(channel)
            unique.append(channel)
        }
        self.configuration = configuration
        self.channels = unique
        self.reconnectDelay = reconnectDelay
        self.livenessInterval = livenessInterval
        self.inline = inline
    }

    deinit {
        for sink in state.withLock({ $0.stop().1 }) { sink.finish() }
    }

    /// Whether the listener is listening right now, for readiness checks and metrics.
    public var isConnected: Bool {
        state.withLock { $0.backendPID != nil }
    }

    /// The server process of the listening connection while connected, as `pg_stat_activity.pid` shows it.
    public var backendPID: Int32? {
        state.withLock { $0.backendPID }
    }

    /// Why the listening connection most recently broke or could not be opened; kept after reconnecting, for
    /// diagnostics. Nil if nothing has failed yet.
    public var lastError: PostgresError? {
        state.withLock { $0.lastError }
    }

    /// A new stream of this listener's events; each call gets its own, and every stream gets every event.
    ///
    /// Subscribe before ``start()``, or expect `.connected` first: events before a stream existed are not replayed.
    /// The buffer is unbounded, so consume promptly. The stream finishes when ``stop()`` is called; a stream
    /// requested after that is already finished. Ending the iteration (or its task) unsubscribes.
    public func notifications() -> AsyncStream<ListenerEvent> {
        subscribe(channels: nil)
    }

    /// A new stream of this listener's events with only the notifications on `channels` (every connection event
    /// still): a follower of one channel is not woken for another's notices, as it is by ``notifications()``.
    public func notifications(on channels: Set<String>) -> AsyncStream<ListenerEvent> {
        subscribe(channels: channels)
    }

    /// This listener's events with the notifications on `channels`, taken in runs (see ``ListenerRuns``): for a
    /// follower that applies whatever arrived together, with no task between the listener and it. Subscribe before
    /// ``start()``, or expect `.connected` first. The runs finish when ``stop()`` is called, or when a follower's
    /// task is cancelled in ``ListenerRuns/next()``.
    public func runs(on channels: Set<String>) -> ListenerRuns {
        let runs = ListenerRuns()
        guard let id = state.withLock({ $0.subscribe(.runs(runs), channels: channels) }) else {
            runs.finish()
            return runs
        }
        runs.onFinish { [weak self] in
            self?.state.withLock { $0.unsubscribe(id) }
        }
        return runs
    }

    private func subscribe(channels: Set<String>?) -> AsyncStream<ListenerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ListenerEvent.self, bufferingPolicy: .unbounded)
        let subscribed = state.withLock { $0.subscribe(continuation, channels: channels) }
        guard let id = subscribed else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.unsubscribe(id) }
        }
        return stream
    }

    /// Starts connecting and listening in the background; returns at once. Calls after the first, and any call
    /// after ``stop()``, do nothing: a stopped listener stays stopped.
    public func start() {
        _ = state.withLock { state in
            // On the reactor's thread: the socket's readiness resumes the loop where it was read, and the batch goes to
            // its followers from there, with no hop to the global executor in between.
            state.start { Task(executorPreference: configuration.reactor) { await self.run() } }
        }
    }

    /// Stops listening: cancels the loop, closes the connection, then finishes every stream. Returns once the
    /// connection is closed. Idempotent.
    public func stop() async {
        let (task, sinks) = state.withLock { $0.stop() }
        task?.cancel()
        await task?.value
        for sink in sinks { sink.finish() }
    }
}
