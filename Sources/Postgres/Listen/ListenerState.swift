/// A ``PostgresListener``'s mutable part: its loop task, its subscribers, and the connection it listens on.
///
/// Events are yielded while the owner's lock is held, so each stream sees them in one order, starting with
/// `.connected`. Continuations are finished only outside the lock: `finish()` runs `onTermination`, which locks.
struct ListenerState: Sendable {
    typealias Continuation = AsyncStream<ListenerEvent>.Continuation

    /// Where a subscriber's events go: an `AsyncStream`, one event at a time, or ``ListenerRuns``, a batch at once.
    enum Sink: Sendable {
        case stream(Continuation)
        case runs(ListenerRuns)

        func send(_ event: ListenerEvent) {
            switch self {
            case .stream(let continuation): continuation.yield(event)
            case .runs(let runs): runs.append(CollectionOfOne(event))
            }
        }

        func finish() {
            switch self {
            case .stream(let continuation): continuation.finish()
            case .runs(let runs): runs.finish()
            }
        }
    }

    /// The life of the background loop.
    enum Phase: Sendable {
        case idle
        case running(Task<Void, Never>)
        /// Stopped for good; the task, if any, is kept so every caller of `stop()` can await it.
        case stopped(Task<Void, Never>?)
    }

    /// Where a subscriber's notifications go, and which: kept in one object, so that handing out a batch copies one
    /// reference per subscriber, not its sink and its channels.
    private final class Target: Sendable {
        let sink: Sink
        /// The channels whose notifications this stream gets; nil for every channel. A list, not a set: a follower
        /// has one or two, and comparing them costs less than hashing each notification's channel.
        let channels: [String]?

        init(sink: Sink, channels: [String]?) {
            self.sink = sink
            self.channels = channels
        }

        func follows(_ channel: String) -> Bool {
            channels?.contains(channel) ?? true
        }
    }

    private struct Subscriber: Sendable {
        let target: Target
        /// Whether this stream got `.connected`; later connections are `.reconnected` for it.
        var sawConnection = false
        var sink: Sink { target.sink }
    }

    private(set) var phase = Phase.idle
    /// The backend serving the listening connection, while it listens.
    private(set) var backendPID: Int32?

    /// The failure that most recently broke or prevented the listening connection.
    private(set) var lastError: PostgresError?
    private var subscribers: [UInt64: Subscriber] = [:]
    private var lastSubscriberID: UInt64 = 0

    /// Whether `stop()` was called.
    var isStopped: Bool {
        if case .stopped = phase { return true }
        return false
    }

    /// Records the loop task, unless the listener runs or was stopped already; returns whether it did.
    mutating func start(_ makeTask: () -> Task<Void, Never>) -> Bool {
        guard case .idle = phase else { return false }
        phase = .running(makeTask())
        return true
    }

    /// Adds a stream for the notifications on `channels` (nil: on every channel), sending it `.connected` at once
    /// if the listener listens now; nil once stopped.
    mutating func subscribe(_ continuation: Continuation, channels: Set<String>? = nil) -> UInt64? {
        subscribe(.stream(continuation), channels: channels)
    }

    /// Adds a sink for the notifications on `channels` (nil: on every channel), sending it `.connected` at once if
    /// the listener listens now; nil once stopped.
    mutating func subscribe(_ sink: Sink, channels: Set<String>?) -> UInt64? {
        guard !isStopped else { return nil }
        lastSubscriberID += 1
        var subscriber = Subscriber(target: Target(sink: sink, channels: channels.map(Array.init)))
        if backendPID != nil {
            sink.send(.connected)
            subscriber.sawConnection = true
        }
        subscribers[lastSubscriberID] = subscriber
        return lastSubscriberID
    }

    /// How many streams and runs are subscribed.
    var subscriberCount: Int { subscribers.count }

    /// Forgets a stream whose consumer went away.
    mutating func unsubscribe(_ id: UInt64) {
        subscribers[id] = nil
    }

    /// The connection to `backendPID` listens on every channel: tells each stream.
    mutating func connected(backendPID: Int32) {
        guard !isStopped else { return }
        self.backendPID = backendPID
        for id in subscribers.keys {
            subscribers[id]?.sink.send(subscribers[id]?.sawConnection == true ? .reconnected : .connected)
            subscribers[id]?.sawConnection = true
        }
    }

    /// Passes each notification on to the streams that follow its channel.
    func publish(_ notifications: [PostgresNotification]) {
        for subscriber in subscribers.values {
            let target = subscriber.target
            switch target.sink {
            case .stream(let continuation):
                for notification in notifications where target.follows(notification.channel) {
                    continuation.yield(.notification(notification))
                }
            case .runs(let runs):
                var batch: [ListenerEvent] = []
                for notification in notifications where target.follows(notification.channel) {
                    batch.append(.notification(notification))
                }
                runs.append(batch)
            }
        }
    }

    /// The listening connection is gone, or a connection attempt failed with `error`.
    mutating func disconnected(error: PostgresError?) {
        backendPID = nil
        if let error { lastError = error }
    }

    /// Marks the listener stopped; returns the loop to cancel and the sinks to finish.
    mutating func stop() -> (Task<Void, Never>?, [Sink]) {
        let task: Task<Void, Never>?
        switch phase {
        case .idle: task = nil
        case .running(let running): task = running
        case .stopped(let stopped): task = stopped
        }
        phase = .stopped(task)
        defer { subscribers = [:] }
        return (task, subscribers.values.map(\.sink))
    }
}
