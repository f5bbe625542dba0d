/// Which interactions an inbox stream shows: by assignment (`assigned=me|none|any`) and by state (`state=`, one or
/// more; default `started`), with the meaning the interaction list gives them.
struct InboxFilter: Sendable, Equatable {
    /// Which assignments are in view.
    enum Assignment: String, Sendable, CaseIterable {
        /// Assigned to the watching agent.
        case me
        /// Assigned to nobody.
        case none
        /// Either.
        case any
    }

    let assignment: Assignment
    let states: Set<InteractionState>

    /// Whether an interaction in `state`, assigned to `assignee`, is in view of `agent`.
    func includes(state: InteractionState, assignee: String?, agent: String) -> Bool {
        guard states.contains(state) else { return false }
        switch assignment {
        case .me: return assignee == agent
        case .none: return assignee == nil
        case .any: return true
        }
    }
}

/// What an inbox stream's client is known to show, to decide when an interaction that no longer matches the filter
/// gets its one `"in_view": false` event. A stream that began with a snapshot knows exactly what its client shows;
/// a resumed one does not (its client kept what an earlier stream sent), so it tells of every change that leaves
/// the view, once, rather than leave a stale row on the client's screen.
struct InboxView: Sendable {
    /// What the stream should send for one change.
    enum Decision: Equatable { case show, remove, skip }

    /// Shown by the client, as far as this stream knows.
    private var shown: Set<String> = []
    /// Told to the client as out of view, by this stream.
    private var removed: Set<String> = []
    /// Whether `shown` is all the client shows (the stream began with a snapshot).
    private let exact: Bool

    /// A view that begins with `shown` (a snapshot) when exact, or with whatever an earlier stream left.
    init(shown: Set<String> = [], exact: Bool) {
        self.shown = shown
        self.exact = exact
    }

    /// The event for a change of `id`, which now does or does not match the filter.
    mutating func decide(_ id: String, matches: Bool) -> Decision {
        if matches {
            shown.insert(id)
            removed.remove(id)
            return .show
        }
        if shown.remove(id) != nil || (!exact && !removed.contains(id)) {
            removed.insert(id)
            return .remove
        }
        return .skip
    }
}
