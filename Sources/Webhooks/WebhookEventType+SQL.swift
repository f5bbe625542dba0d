extension WebhookEventType {
    /// `webhook_event_type(event_kind, event_state)`, the SQL function the outbox trigger maps a stored event's kind
    /// and payload state with, generated from ``source``. A migration installs it: when the mapping changes, add a
    /// migration with the new text (``WebhooksMigrations/installedEventTypeMapping`` is what the database has, and
    /// a test checks that it equals this).
    public static var mappingFunctionSQL: String {
        let branches = allCases.compactMap { type -> String? in
            guard let source = type.source else { return nil }
            let state = source.state.map { " AND event_state = '\($0.rawValue)'" } ?? ""
            return "        WHEN event_kind = '\(source.kind.rawValue)'\(state) THEN '\(type.rawValue)'\n"
        }.joined()
        return """
            CREATE OR REPLACE FUNCTION webhook_event_type(event_kind text, event_state text) RETURNS text
            LANGUAGE sql IMMUTABLE AS $$
                SELECT CASE
            \(branches)    END
            $$;

            """
    }
}
