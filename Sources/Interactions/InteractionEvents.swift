import Coordination
import Foundation
import Postgres

/// Live interaction events of this process: every subscriber has its own bounded stream (a `SubscriberHub`), fed by
/// one dispatcher that turns change notices (ids only) into events read from the log, in `seq` order.
///
/// Notices from every replica arrive over the dedicated LISTEN connection; call `handle(notice:)` from ONE task
/// (ordering), `catchUp()` after the listener reconnected (notices may have been missed), `finishAll()` at shutdown.
public final class InteractionEvents: Sendable {
    let log: InteractionEventLog
    let hub = SubscriberHub<UUID, InteractionStreamEvent>()
    /// Guards, per interaction with subscribers, the last `seq` handed to them (the catch-up point).
    private let dispatched = Locked<[UUID: Int64]>([:])
    /// How many events a subscriber may have waiting before its stream is closed (it then reconnects).
    public let bufferLimit: Int
    /// Guards the one task that sends every subscriber a heartbeat (one timer for all, not one per stream).
    private let heartbeats = Locked<Task<Void, Never>?>(nil)

    /// How long a client should wait before reconnecting: every stream starts with it as its `retry:` field.
    public let reconnectDelay: Duration

    /// Events read through `pool`; every subscriber gets a heartbeat each `heartbeat`.
    public init(pool: PostgresPool, bufferLimit: Int = 256, heartbeat: Duration = .seconds(15),
                reconnectDelay: Duration = .seconds(2)) {
        self.log = InteractionEventLog(pool: pool)
        self.bufferLimit = bufferLimit
        self.reconnectDelay = reconnectDelay
        let hub = self.hub
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                hub.publishToAll(InteractionStreamEvent.heartbeat)
            }
        }
        heartbeats.withLock { $0 = task }
    }

    deinit {
        heartbeats.withLock { $0 }?.cancel()
    }

    /// A new subscriber of `id`; subscribe before reading the replay, so nothing falls between the two.
    public func subscribe(_ id: UUID) -> SubscriberHub<UUID, InteractionStreamEvent>.Subscription {
        hub.subscribe(id, bufferLimit: bufferLimit)
    }

    /// A subscriber has replayed the log up to `seq`: live dispatch continues from at least there.
    public func noteReplayed(_ id: UUID, through seq: Int64) {
        dispatched.withLock { $0[id] = max($0[id] ?? seq, seq) }
    }

    /// Live subscribers, all interactions together (observable; back to zero when clients leave).
    public var subscriberCount: Int { hub.subscriberCount }

    /// Applies one change notice (see ``InteractionNotice``); payloads of neither form are ignored.
    public func handle(notice: String) async {
        switch InteractionNotice(payload: notice) {
        case .stored(let id, let seq):
            await dispatch(id, upTo: seq)
        case .typing(let id, let isTyping, let role, let user):
            guard hub.subscriberCount(for: id) > 0 else { return }
            let data: [String: Any] = ["typing": isTyping, "sender_role": role, "sender_id": user, "expires_in": 5]
            let json = (try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            hub.publish(InteractionStreamEvent(seq: nil, kind: "typing", data: json, terminal: false), to: id)
        case nil:
            return
        }
    }

    /// After missed notices: hands every subscribed interaction's newer events to its subscribers.
    public func catchUp() async {
        for id in dispatched.withLock({ Array($0.keys) }) { await dispatch(id, upTo: nil) }
    }

    /// Shutdown: tells every subscriber to reconnect (a final `reconnect` event — another replica will serve it),
    /// then ends every stream and the heartbeats.
    public func finishAll() {
        heartbeats.withLock { $0 }?.cancel()
        hub.publishToAll(InteractionStreamEvent(seq: nil, kind: "reconnect", data: #"{"reason":"shutdown"}"#, terminal: true))
        hub.finishAll()
    }

    private func dispatch(_ id: UUID, upTo seq: Int64?) async {
        guard hub.subscriberCount(for: id) > 0 else {
            _ = dispatched.withLock { $0.removeValue(forKey: id) }
            return
        }
        let last = dispatched.withLock { $0[id] } ?? (seq.map { $0 - 1 } ?? 0)
        if let seq, seq <= last { return }
        guard let events = try? await log.events(of: id, after: last), !events.isEmpty else { return }
        for event in events { hub.publish(event, to: id) }
        dispatched.withLock { $0[id] = max($0[id] ?? last, events.last?.seq ?? last) }
        if events.contains(where: \.terminal) {
            hub.finish(id)
            _ = dispatched.withLock { $0.removeValue(forKey: id) }
        }
    }
}
