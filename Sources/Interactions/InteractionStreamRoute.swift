import Accounts
import Coordination
import Foundation
import HTTPServer
import Postgres

/// `GET /v1/interactions/{id}/events`: the interaction's events as Server-Sent Events.
///
/// Without `Last-Event-ID`: a `state` snapshot, then live events. With it (header or `last_event_id` query
/// parameter): every stored event after it, then live — the subscription is taken before the log is read and live
/// events are skipped up to the last replayed `seq`, so the seam has no gap and no duplicate. The response ends after
/// the final `state` event, or when the subscriber fell too far behind (the client reconnects with its last id).
struct InteractionStreamRoute: Sendable {
    let pool: PostgresPool
    let store: InteractionStore
    let events: InteractionEvents

    @Sendable func stream(_ request: Request, _ principal: Principal) async throws -> Response {
        let id = try InteractionRequest.id(request)
        let lastEventID = try InteractionStreamRoute.lastEventID(request)
        guard try await pool.withConnection({ [store] connection in
            try await store.find(id, for: principal, on: connection)
        }) != nil else { throw InteractionRequest.notFound }

        let subscription = events.subscribe(id)
        let replay: [InteractionStreamEvent]
        if let lastEventID {
            replay = try await events.log.events(of: id, after: lastEventID)
        } else {
            guard let snapshot = try await events.log.snapshot(of: id) else { throw InteractionRequest.notFound }
            replay = [snapshot]
        }
        let replayedThrough = replay.last?.seq ?? lastEventID ?? 0
        events.noteReplayed(id, through: replayedThrough)
        let finished = replay.contains(where: \.terminal)
        let retry = events.reconnectDelay.components
        let retryMilliseconds = retry.seconds * 1000 + retry.attoseconds / 1_000_000_000_000_000
        let body = StreamedBody { writer in
            try await writer.write(Array("retry: \(retryMilliseconds)\n\n".utf8))
            for event in replay { try await writer.write(InteractionStreamRoute.encode(event)) }
            if finished { return }
            var sentThrough = replayedThrough
            for await event in subscription.stream {
                if event.isHeartbeat {
                    try await writer.write(InteractionStreamRoute.heartbeat)
                    continue
                }
                if let seq = event.seq {
                    if seq <= sentThrough { continue }
                    sentThrough = seq
                }
                try await writer.write(InteractionStreamRoute.encode(event))
                if event.terminal { return }
            }
        }
        return Response(status: 200, headers: ["Content-Type": "text/event-stream; charset=utf-8",
                                               "Cache-Control": "no-store", "X-Accel-Buffering": "no"],
                        stream: body)
    }

    static let heartbeat = ServerSentEvent.comment("heartbeat")

    static func encode(_ event: InteractionStreamEvent) -> [UInt8] {
        ServerSentEvent(id: event.seq.map(String.init), event: event.kind, data: event.data).encoded()
    }

    static func lastEventID(_ request: Request) throws -> Int64? {
        guard let text = request.headers["Last-Event-ID"] ?? request.queryValue("last_event_id") else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        guard let seq = Int64(trimmed), seq >= 0 else {
            throw Problem.badRequest("Last-Event-ID must be an event id this stream sent.", parameter: "last_event_id")
        }
        return seq
    }
}
