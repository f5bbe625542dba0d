import Accounts
import Coordination
import Foundation
import HTTPServer
import Postgres

/// `GET /v1/interactions/{id}/events`: the interaction's events as Server-Sent Events.
///
/// Without `Last-Event-ID`: a `state` snapshot, then live events. With it (header or `last_event_id` query
/// parameter; `0` replays the whole log): every stored event after it, then live — the subscription is taken before
/// the log is read, and live events this stream already sent are skipped, so the seam has no gap and no duplicate.
/// Ids count 1, 2, 3… within the interaction, so a live event beyond the next id reveals a hole, which the stream
/// fills from the log. The response ends after the final `state` event, when the session's credentials end (a
/// `reconnect` event saying why), or when the subscriber fell too far behind (the client reconnects with its last
/// id).
///
/// Refusals: an interaction that is over, resumed from or past its final event, is 204 (an `EventSource` stops
/// reconnecting); on a live interaction, an id beyond its log is 400 `/problems/unknown-event-id` (start again
/// without it); a user holding too many streams already is 429.
struct InteractionStreamRoute: Sendable {
    let events: InteractionEvents
    /// Position checks and replay reads, batched across streams that start together.
    let starts: StreamStarts
    /// Every stream's first line, `retry: <reconnection delay>`, written once.
    let retryLine: [UInt8]

    init(pool: PostgresPool, events: InteractionEvents) {
        self.events = events
        starts = StreamStarts(pool: pool, log: events.log)
        retryLine = InteractionStreamRoute.retryLine(milliseconds: events.reconnectDelay.wholeMilliseconds)
    }

    @Sendable func stream(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let lastEventID = try InteractionStreamRoute.lastEventID(request)
        // A start remembered from an earlier stream says as much as the log's position would: the interaction is
        // live, and the caller may see it.
        if lastEventID != nil || !events.remembersStart(of: id, for: principal) {
            guard let position = try await starts.position(of: id, for: principal) else { throw InteractionError.notFound(id) }
            if let lastEventID {
                // Nothing can ever follow the final event: 204 makes an EventSource stop reconnecting.
                if position.isOver && lastEventID >= position.lastSeq { return .empty(status: 204) }
                guard lastEventID <= position.lastSeq else {
                    throw InteractionError.resumeBeyondLog(id, lastEventID: lastEventID, lastSeq: position.lastSeq)
                }
            }
        }

        let subscription = try events.subscribe(id, for: principal)
        let replay: [InteractionStreamEvent]
        if let lastEventID {
            replay = try await starts.events(of: id, after: lastEventID)
        } else {
            replay = [try await snapshot(of: id, for: principal)]
        }
        return response(id, subscription: subscription, replay: replay, after: lastEventID)
    }

    /// The answer from memory, on the server's thread: a new stream (no `Last-Event-ID`) of an interaction whose start
    /// is remembered, the caller's token known. Nil, for ``stream(_:_:)`` to answer, in every other case — an error
    /// included (a bad id or header, the user's stream cap): that answer says what is wrong.
    @Sendable func streamFromMemory(_ request: Request, _ principal: Principal) -> Response? {
        guard let id = try? InteractionRequest.id(request), InteractionStreamRoute.startsAfresh(request),
              events.remembersStart(of: id, for: principal),
              let subscription = try? events.subscribe(id, for: principal),
              // Looked up again once subscribed, when it is exact; without it, the subscription ends as it is dropped.
              let snapshot = events.rememberedSnapshot(of: id, for: principal) else { return nil }
        return response(id, subscription: subscription, replay: [snapshot], after: nil)
    }

    /// The stream of `id`: `replay` (the snapshot, or the events after `lastEventID`) with the head, then the live
    /// events `subscription` brings that come after it.
    private func response(_ id: UUID, subscription: SubscriberHub<UUID, InteractionStreamEvent>.Subscription,
                          replay: [InteractionStreamEvent], after lastEventID: Int64?) -> Response {
        let replayedThrough = replay.last?.seq ?? lastEventID ?? 0
        let finished = replay.contains(where: \.terminal)
        let log = events.log
        // The replay goes out with the response's head, and the closure below does not hold it (it lives as long as
        // the stream: all of a long interaction's log, for a client resuming from 0).
        let opening = InteractionStreamRoute.opening(retryLine, replay)
        if finished { return InteractionStreamRoute.eventStream(StreamedBody(opening: opening) { _ in }) }
        // The producer's task starts at the subscription's first event (or its end): a stream with nothing to send
        // holds none, so a burst of new streams costs no task each.
        let body = StreamedBody(opening: opening, startsWhen: subscription.whenReady) { writer in
            // Started only to end the stream (the client left before anything was published): there is nothing to
            // write, and the subscription's stream need not be made to find that out.
            if Task.isCancelled { return }
            var sentThrough = replayedThrough
            for await event in subscription.stream {
                if event.isHeartbeat {
                    try await writer.write(event.encoded)
                } else if let seq = event.seq, seq > sentThrough + 1 {
                    // A hole (the dispatcher started after this stream's replay, say): read it from the log. Kept out
                    // of this loop, whose frame lives as long as the stream (a larger one costs memory per stream).
                    if try await InteractionStreamRoute.fillHole(id, after: &sentThrough, log: log, writer: writer) { return }
                } else if event.seq.map({ $0 > sentThrough }) ?? true {
                    try await writer.write(event.encoded)
                    if let seq = event.seq { sentThrough = seq }
                    if event.terminal { return }
                }
            }
        }
        return InteractionStreamRoute.eventStream(body)
    }

    /// The 200 answer streaming `body` as Server-Sent Events.
    private static func eventStream(_ body: StreamedBody) -> Response {
        Response(status: 200, headers: eventStreamHeaders, stream: body)
    }

    /// An event stream's header fields, made once: every stream's answer shares the list (its request id, added on the
    /// way out, is held apart).
    private static let eventStreamHeaders = HTTPHeaders(sharing: ["Content-Type": "text/event-stream; charset=utf-8",
                                                                  "Cache-Control": "no-store", "X-Accel-Buffering": "no"])

    /// The `state` event a subscribed stream without `Last-Event-ID` opens with: remembered from an earlier stream
    /// (looked up after subscribing, when it is exact), else read, and remembered for the streams that follow.
    private func snapshot(of id: UUID, for principal: Principal) async throws -> InteractionStreamEvent {
        if let remembered = events.rememberedSnapshot(of: id, for: principal) { return remembered }
        let ticket = events.startTicket
        guard let snapshot = try await starts.snapshot(of: id) else { throw InteractionError.notFound(id) }
        events.remember(snapshot, of: id, for: principal, ticket: ticket)
        return snapshot
    }

    /// The line that sets a client's reconnection delay.
    static func retryLine(milliseconds: Int64) -> [UInt8] {
        Array("retry: \(milliseconds)\n\n".utf8)
    }

    /// The stream's first bytes: the reconnection delay's line, then the replay (or snapshot), in one buffer.
    static func opening(_ retryLine: [UInt8], _ replay: [InteractionStreamEvent]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(replay.reduce(retryLine.count) { $0 + $1.encoded.count })
        bytes.append(contentsOf: retryLine)
        for event in replay { bytes.append(contentsOf: event.encoded) }
        return bytes
    }

    /// Writes the log's events of `id` after `sentThrough`, advancing it; returns whether the final one was written.
    @inline(never)
    static func fillHole(_ id: UUID, after sentThrough: inout Int64, log: InteractionEventLog,
                         writer: any BodyWriter) async throws -> Bool {
        for event in try await log.events(of: id, after: sentThrough) {
            guard let seq = event.seq, seq > sentThrough else { continue }
            try await writer.write(event.encoded)
            sentThrough = seq
            if event.terminal { return true }
        }
        return false
    }

    /// Whether `request` asks for a new stream: no `Last-Event-ID` at all (an unusable one is not that, but a 400).
    static func startsAfresh(_ request: Request) -> Bool {
        do { return try lastEventID(request) == nil } catch { return false }
    }

    static func lastEventID(_ request: Request) throws -> Int64? {
        guard let text = request.headers[.lastEventID] ?? request.queryValue("last_event_id") else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        guard let seq = Int64(trimmed), seq >= 0 else {
            throw Problem.badRequest("Last-Event-ID must be an event id this stream sent.", parameter: "last_event_id")
        }
        return seq
    }
}
