import Foundation
import Postgres
import Testing

@Suite(.enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(5)))
struct MigratorTests {
    static let migrations = [
        Migration(version: 1, name: "create items", sql: "CREATE TABLE items (id int PRIMARY KEY)"),
        Migration(version: 2, name: "seed", sql: "INSERT INTO items VALUES (1); INSERT INTO items VALUES (2);"),
        Migration(version: 3, name: "add name", sql: "ALTER TABLE items ADD COLUMN name text NOT NULL DEFAULT 'x'"),
    ]

    /// Runs `body` against a fresh schema (as the pools' search_path), dropped afterwards.
    func withSchema(_ body: (_ makePool: () -> PostgresPool) async throws -> Void) async throws {
        let schema = TestDatabase.uniqueName("mig")
        try await TestDatabase.withConnection { try await $0.execute(script: "CREATE SCHEMA \(schema)") }
        var pools: [PostgresPool] = []
        do {
            try await body {
                let pool = PostgresPool(configuration: TestDatabase.configuration(searchPath: schema), maxConnections: 2)
                pools.append(pool)
                return pool
            }
        } catch {
            Issue.record(error)
        }
        for pool in pools { await pool.close() }
        try await TestDatabase.withConnection { try await $0.execute(script: "DROP SCHEMA \(schema) CASCADE") }
    }

    @Test func racingReplicasApplyEachMigrationOnce() async throws {
        let lockKey = Int64.random(in: 1...Int64.max)
        try await withSchema { makePool throws in
            let (replicaA, replicaB) = (makePool(), makePool())
            #expect(try await Migrator.pending(Self.migrations, pool: replicaA) == [1, 2, 3])
            async let appliedByA = Migrator.apply(Self.migrations.shuffled(), pool: replicaA, lockKey: lockKey)
            async let appliedByB = Migrator.apply(Self.migrations, pool: replicaB, lockKey: lockKey)
            let (a, b) = try await (appliedByA, appliedByB)
            #expect((a + b).sorted() == [1, 2, 3])
            #expect(Set(a).isDisjoint(with: b))

            let (items, recorded) = try await replicaA.withConnection { connection in
                (try await connection.query("SELECT count(*) AS n FROM items")[0].decode("n", as: Int.self),
                 try await connection.query("SELECT version, name FROM schema_migrations ORDER BY version")
                    .map { try "\($0.decode("version", as: Int.self)) \($0.decode("name", as: String.self))" })
            }
            #expect(items == 2)
            #expect(recorded == ["1 create items", "2 seed", "3 add name"])

            #expect(try await Migrator.apply(Self.migrations, pool: replicaB, lockKey: lockKey) == [])
            #expect(try await Migrator.pending(Self.migrations, pool: replicaB) == [])
            let next = Self.migrations + [Migration(version: 4, name: "more", sql: "INSERT INTO items (id) VALUES (3)")]
            #expect(try await Migrator.pending(next, pool: replicaB) == [4])
            #expect(try await Migrator.apply(next, pool: replicaA, lockKey: lockKey) == [4])
        }
    }

    @Test func aFailingMigrationAppliesNothing() async throws {
        try await withSchema { makePool throws in
            let pool = makePool()
            let broken = Self.migrations + [Migration(version: 4, name: "typo", sql: "ALTER TABLE itemz ADD COLUMN y int")]
            await #expect { try await Migrator.apply(broken, pool: pool, lockKey: 42) } throws: {
                ($0 as? PostgresError)?.sqlState == "42P01"
            }
            #expect(try await Migrator.pending(broken, pool: pool) == [1, 2, 3, 4])
        }
    }

    @Test func duplicateVersionsAreRejected() async throws {
        let pool = PostgresPool(configuration: TestDatabase.configuration, maxConnections: 1)
        let duplicated = Self.migrations + [Migration(version: 2, name: "again", sql: "SELECT 1")]
        await #expect { try await Migrator.apply(duplicated, pool: pool) } throws: { ($0 as? PostgresError)?.kind == .misuse }
        #expect(pool.stats.size == 0)
        await pool.close()
    }
}
