import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SwitchboardClient {
    /// The live events of an interaction: a new stream per call, all fed by one self-healing connection.
    ///
    /// By default (`from: .beginning`) the stream replays the interaction's log — its first `state` event, then every
    /// message and media change — and goes on live, so a message written just before the stream connected is not
    /// missed. Each stored event arrives exactly once and in order, across dropped connections, server restarts and
    /// token refreshes (a stream whose session was revoked or expired reconnects with a fresh token from
    /// `tokenProvider`). It finishes after the interaction ends or fails, or after a
    /// ``InteractionEvent/refused(_:)`` event. To stop listening, cancel the task iterating it or break out of the
    /// loop: that ends this stream only, and the connection closes when the last stream of the interaction ends. A
    /// stream that is neither iterated nor ended keeps buffering events.
    ///
    /// `from` applies to the connection this call opens. A stream opened while others of the same interaction are
    /// live shares their connection and starts with the state as of the latest event they received (a snapshot at
    /// that `seq`). While the network or the server is down, or `tokenProvider` throws, the connection keeps
    /// retrying with backoff; a 401 is retried once with a fresh token, then reported as `.refused`. The connection
    /// uses `session`'s configuration, not its delegate.
    public func events(for interactionID: String, from start: EventStreamStart = .beginning) -> AsyncStream<InteractionEvent> {
        guard let url = try? url("/v1/interactions/\(Self.segment(interactionID))/events", []) else {
            return AsyncStream { $0.finish() }
        }
        return liveInteractions.subscribe(to: interactionID) { registry, nudge in
            InteractionEventConnection(url: url, tokenProvider: tokenProvider, configuration: eventConfiguration,
                                       policy: eventPolicy, start: start, registry: registry, nudge: nudge)
        }
    }

    /// Makes every disconnected event stream try again now instead of at the end of its backoff: call it when the
    /// network comes back or the app returns to the foreground. Connected streams are not touched.
    public func reconnectEventStreams() {
        liveInteractions.reconnectNow()
    }

    /// How many interactions have an event connection open (one however many streams each has).
    public var openEventConnections: Int { liveInteractions.count }
}
