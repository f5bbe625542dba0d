extension InteractionState {
    /// The SQL twin of ``isOver``, and its one spelling in SQL: a boolean expression that is true when `state`, a
    /// text expression holding a state's raw value (a column, a JSON field), names a state that is over.
    ///
    /// Like `<>`, it is NULL when `state` is NULL: guard a JSON field that may be absent (a non-`state` event).
    static func isOverSQL(_ state: String) -> String {
        "\(state) <> '\(InteractionState.started.rawValue)'"
    }
}
