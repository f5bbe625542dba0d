import App
import Foundation
import Postgres

/// A database of its own with every migration applied, a pool on it, and tenants by name: the start of the tests that
/// drive the stores and services directly, without an app around them.
struct MigratedDatabase {
    let database: TestDatabase
    let pool: PostgresPool

    /// A fresh migrated database and a pool of `maxConnections` on it. The pool waits up to 30 s for a connection: these
    /// tests load it on purpose, and under ThreadSanitizer every statement is several times slower.
    static func create(maxConnections: Int) async throws -> MigratedDatabase {
        let database = try await TestDatabase.create()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: database.url),
                                maxConnections: maxConnections, acquireTimeout: .seconds(30))
        _ = try await Migrator.apply(Migrations.all, pool: pool)
        return MigratedDatabase(database: database, pool: pool)
    }

    /// Creates one tenant per name; returns their ids in the same order.
    func tenants(_ names: [String]) async throws -> [UUID] {
        try await pool.withConnection { connection in
            var ids: [UUID] = []
            for name in names {
                let rows = try await connection.query("INSERT INTO tenants (name) VALUES ($1) RETURNING id", [name])
                ids.append(try rows[0].decode("id"))
            }
            return ids
        }
    }

    /// Closes the pool and drops the database.
    func drop() async {
        await pool.close()
        await database.drop()
    }
}
