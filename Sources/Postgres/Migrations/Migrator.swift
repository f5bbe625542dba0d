/// Applies ``Migration``s exactly once per database, even when several replicas start at the same moment.
///
/// Everything happens in one transaction holding a transaction-scoped advisory lock: replicas queue on the lock,
/// and each sees the versions the previous one recorded in `schema_migrations` (created on first use, in the
/// connection's `search_path`). If any migration fails, none of this run's migrations is applied.
public enum Migrator {
    /// The advisory lock key used unless another is given; the same key must be used by every replica.
    public static let defaultLockKey: Int64 = 0x5357_4954_4348_4D47

    /// Applies the migrations not yet recorded, in version order; returns the versions applied by this call.
    ///
    /// Throws a `.misuse` error, before touching the database, if two migrations share a version.
    public static func apply(
        _ migrations: [Migration], pool: PostgresPool, lockKey: Int64 = defaultLockKey
    ) async throws -> [Int] {
        let ordered = try sorted(migrations)
        return try await pool.withTransaction { connection in
            // A script, not a bounded statement: waiting here for another replica's long migration is expected.
            // (The key is an integer of ours, not input.)
            try await connection.execute(script: "SELECT pg_advisory_xact_lock(\(lockKey))")
            try await connection.execute(script: createTable)
            let applied = try await appliedVersions(connection)
            var appliedNow: [Int] = []
            for migration in ordered where !applied.contains(migration.version) {
                try await connection.execute(script: migration.sql)
                _ = try await connection.query(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name])
                appliedNow.append(migration.version)
            }
            return appliedNow
        }
    }

    /// The versions not yet applied, in order, without changing anything; for readiness checks.
    public static func pending(_ migrations: [Migration], pool: PostgresPool) async throws -> [Int] {
        let ordered = try sorted(migrations)
        let applied = try await pool.withConnection { connection -> Set<Int> in
            let table = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
            guard try table.first?.decode("present", as: Bool.self) == true else { return [] }
            return try await appliedVersions(connection)
        }
        return ordered.map(\.version).filter { !applied.contains($0) }
    }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version int PRIMARY KEY,
            name text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    private static func appliedVersions(_ connection: PostgresConnection) async throws -> Set<Int> {
        let rows = try await connection.query("SELECT version FROM schema_migrations")
        return Set(try rows.map { try $0.decode("version", as: Int.self) })
    }

    private static func sorted(_ migrations: [Migration]) throws(PostgresError) -> [Migration] {
        let ordered = migrations.sorted { $0.version < $1.version }
        for (previous, next) in zip(ordered, ordered.dropFirst()) where previous.version == next.version {
            throw PostgresError(.misuse, "migrations \"\(previous.name)\" and \"\(next.name)\" share version \(next.version)")
        }
        return ordered
    }
}
