import Postgres

/// Keys the replicas share without being configured alike (`service_keys`): each made once, from the system's random
/// source, by whichever replica asks first, and then the same for all.
enum ServiceKeys {
    /// The 32-byte key called `name`, made now if no replica has made it yet.
    static func key(named name: String, on connection: PostgresConnection) async throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let fresh = (0 ..< 32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        // Two replicas making it at once: the one that waited on the other's insert does not see that row in the
        // same statement, and asks again.
        var rows = try await connection.query(statement, [name, fresh])
        if rows.isEmpty { rows = try await connection.query(statement, [name, fresh]) }
        guard let row = rows.first else { throw PostgresError(.decoding, "no service key '\(name)'", column: "key") }
        let key: [UInt8] = try row.decode("key")
        guard key.count == 32 else { throw PostgresError(.decoding, "service key '\(name)' is not 32 bytes", column: "key") }
        return key
    }

    static let statement = """
        WITH made AS (INSERT INTO service_keys (name, key) VALUES ($1, $2::bytea)
                      ON CONFLICT (name) DO NOTHING RETURNING key)
        SELECT key FROM made
        UNION ALL SELECT key FROM service_keys WHERE name = $1
        LIMIT 1
        """
}
