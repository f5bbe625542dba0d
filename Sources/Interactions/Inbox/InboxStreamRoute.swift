import Accounts
import Foundation
import HTTPServer

/// `GET /v1/inbox/events` (agents' sessions): every change to an interaction of the caller's tenant, as Server-Sent
/// Events — one `interaction` event per change (rapid changes of one interaction may arrive as one, the latest),
/// with the interaction as `GET /v1/interactions/{id}` shows it to the caller, its `last_message` and `in_view`.
///
/// Filters: `assigned=me|none|any` (default `any`) and `state=` (comma-separated; default `started`). Without
/// `Last-Event-ID`: every interaction in view, newest first, then `snapshot-end` (the first id), then live changes.
/// With it: every interaction changed since, once, oldest change first, then live. Ids are opaque; one this
/// tenant's streams were not given is 400. Ends with a `reconnect` event (credentials ended, shutdown, a client that
/// stopped reading); the client resumes from its last id.
public struct InboxStreamRoute: Sendable {
    let feed: InboxFeed
    let guardian: AccessGuard

    /// The route over `feed`, guarded by `guardian`.
    public init(feed: InboxFeed, guardian: AccessGuard) {
        self.feed = feed
        self.guardian = guardian
    }

    /// The route's template.
    public static let template = "/v1/inbox/events"

    /// Adds the route to `router`.
    public func register(on router: inout Router) {
        router.get(Self.template, guardian.require(.agent, stream))
    }

    @Sendable func stream(_ request: Request, _ principal: Principal) async throws -> Response {
        guard let agent = principal.userID else { throw InteractionError.notFound(nil) }
        let filter = try InboxStreamRoute.filter(request)
        var lastEventID = (request.headers[.lastEventID] ?? request.queryValue("last_event_id"))?
            .trimmingCharacters(in: .whitespaces)
        if lastEventID?.isEmpty == true { lastEventID = nil }
        let (opening, watcher) = try await feed.open(for: principal, agent: agent, filter: filter,
                                                     lastEventID: lastEventID)
        // Closes the watcher however the body ends — written out, cancelled, or never run (the client left first).
        let subscription = InboxSubscription(feed: feed, watcher: watcher)
        let body = StreamedBody(opening: opening) { writer in
            for await _ in subscription.watcher.wakeups {
                let (bytes, over) = subscription.watcher.take()
                if let bytes { try await writer.write(bytes) }
                if over { return }
            }
            // Ended: what the last wakeup did not take (the ending) is still waiting.
            if let bytes = subscription.watcher.take().bytes { try await writer.write(bytes) }
        }
        return Response(status: 200, headers: ["Content-Type": "text/event-stream; charset=utf-8",
                                               "Cache-Control": "no-store", "X-Accel-Buffering": "no"],
                        stream: body)
    }

    /// The stream's filter from `assigned` and `state`.
    static func filter(_ request: Request) throws -> InboxFilter {
        let assignment: InboxFilter.Assignment
        switch request.queryValue("assigned") {
        case nil: assignment = .any
        case let text?:
            guard let parsed = InboxFilter.Assignment(rawValue: text) else {
                throw Problem.badRequest("assigned must be me, none or any.", parameter: "assigned")
            }
            assignment = parsed
        }
        var states: Set<InteractionState> = [.started]
        if let text = request.queryValue("state") {
            states = []
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let state = InteractionState(rawValue: String(name)) else {
                    throw Problem.badRequest("state must be one or more of started, ended, failed, comma-separated.",
                                             parameter: "state")
                }
                states.insert(state)
            }
        }
        return InboxFilter(assignment: assignment, states: states)
    }
}

/// Holds an inbox stream's watcher for its body, and closes it when released.
final class InboxSubscription: Sendable {
    let feed: InboxFeed
    let watcher: InboxWatcher

    init(feed: InboxFeed, watcher: InboxWatcher) {
        self.feed = feed
        self.watcher = watcher
    }

    deinit { feed.close(watcher) }
}
