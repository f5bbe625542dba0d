import Foundation

/// The client's open event connections, one per interaction with at least one subscriber.
///
/// A subscriber joins the interaction's registry (opening the connection if it is the first); when the last one
/// leaves, the connection is cancelled and forgotten, and the next subscriber opens a fresh one. A connection that
/// ended on its own (the interaction is over) is replaced too, so a new subscriber always gets the current state.
///
/// The registries' callbacks and the connection tasks hold this object strongly, until their entry is gone: streams
/// go on working after the `SwitchboardClient` that opened them is released, and still close with their last
/// subscriber.
final class LiveInteractions: Sendable {
    private struct Entry {
        let registry: EventFanOut<InteractionEvent>
        let connection: Task<Void, Never>
        let nudge: ReconnectNudge
        /// Tells this entry apart from a later one for the same interaction.
        let generation: UInt64
    }

    private struct State {
        /// The live connection of each interaction.
        var entries: [String: Entry] = [:]
        var nextGeneration: UInt64 = 0
    }

    /// Guards the live connection of each interaction and the generation counter.
    /// Lock order: this lock, then a registry's; a registry never calls back while holding its own.
    private let state = Protected(State())

    /// A new subscriber stream of `interactionID`; `connect` builds the connection for a registry when none is open.
    func subscribe(to interactionID: String,
                   connect: (EventFanOut<InteractionEvent>, ReconnectNudge) -> InteractionEventConnection)
        -> AsyncStream<InteractionEvent> {
        state.withLock { state in
            if let entry = state.entries[interactionID], !entry.registry.isFinished { return entry.registry.subscribe() }
            let generation = state.nextGeneration
            state.nextGeneration += 1
            let registry = EventFanOut<InteractionEvent> {
                self.close(interactionID, generation: generation, onlyIfUnused: true)
            }
            let nudge = ReconnectNudge()
            let connection = connect(registry, nudge)
            let stream = registry.subscribe()
            let task = Task {
                await connection.run()
                self.close(interactionID, generation: generation, onlyIfUnused: false)
            }
            state.entries[interactionID] = Entry(registry: registry, connection: task, nudge: nudge, generation: generation)
            return stream
        }
    }

    /// Cuts every connection's wait before its next attempt short.
    func reconnectNow() {
        let nudges = state.withLock { $0.entries.values.map(\.nudge) }
        for nudge in nudges { nudge.nudge() }
    }

    /// How many interactions have a connection open.
    var count: Int { state.withLock { $0.entries.count } }

    /// Forgets the entry (if it is still `generation`) and cancels its connection — when `onlyIfUnused`, only if
    /// no subscriber joined since the last one left.
    private func close(_ interactionID: String, generation: UInt64, onlyIfUnused: Bool) {
        let closed = state.withLock { state -> Entry? in
            guard let entry = state.entries[interactionID], entry.generation == generation,
                  !onlyIfUnused || entry.registry.count == 0 else { return nil }
            state.entries[interactionID] = nil
            return entry
        }
        closed?.connection.cancel()
        // Finished after it ends on its own (a no-op then); after a cancel, so no late subscriber is left hanging.
        closed?.registry.finish()
    }
}
