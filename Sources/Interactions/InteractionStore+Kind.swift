import Postgres

extension InteractionStore {
    /// Kinds of logged events, as `interaction_events.kind` stores them (the webhooks map them to their own types:
    /// keep the names).
    public enum Kind: String, Sendable, CaseIterable, PostgresDecodable {
        case state, message, media, read, assignment

        /// Reads a stored kind; a name the log does not hold is a decoding error.
        public init(postgresText text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
            let name = String(decoding: text, as: UTF8.self)
            guard let kind = Kind(rawValue: name) else {
                throw PostgresError(.decoding, "cannot decode \"\(name.prefix(64))\" as an interaction event kind")
            }
            self = kind
        }
    }
}
