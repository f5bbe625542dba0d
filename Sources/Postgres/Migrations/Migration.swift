/// One numbered schema change, applied at most once per database by ``Migrator``.
///
/// Never edit or renumber a migration that has shipped: databases that applied it will not run it again.
/// The SQL runs inside a transaction, so statements that refuse one (`CREATE INDEX CONCURRENTLY`) cannot be used.
public struct Migration: Sendable, Hashable {
    /// Unique, increasing number; migrations apply in this order.
    public var version: Int
    /// A short description, recorded in `schema_migrations.name`.
    public var name: String
    /// One or more `;`-separated statements.
    public var sql: String

    /// Creates a migration.
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}
