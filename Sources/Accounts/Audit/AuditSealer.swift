import Crypto
import Foundation
import Postgres

/// Seals committed audit entries into their tenant's chain in (transaction id, id) order: each round takes the
/// entries after the last one sealed whose transactions are older than the oldest still running — every writer of
/// those has finished, so no entry can later appear before the seals — and appends them. One replica seals at a time
/// (a transaction-scoped advisory lock), so the chain has one writer and the entries' own transactions never wait
/// for it, nor write anything for it beyond the entry.
public struct AuditSealer: Sendable {
    let pool: PostgresPool
    let key: [UInt8]
    /// The advisory lock only the sealer takes.
    static let lock: Int64 = 0x5357_4155_4449_5401

    /// A sealer with the chain key (`AUDIT_SEAL_KEY`), which never goes to the database.
    public init(pool: PostgresPool, key: [UInt8]) {
        self.pool = pool
        self.key = key
    }

    /// Whether entry `e` comes after the last one sealed (`audit_sealed_through`) in the sealing order: it is still
    /// to be sealed.
    static let afterLastSealed = "(e.xid, e.id) > (SELECT m.xid, m.id FROM audit_sealed_through m)"

    /// Seals up to `batch` pending entries; how many it sealed (0 when another replica holds the lock).
    public func sealPending(batch: Int = 500) async throws -> Int {
        try await pool.withTransaction { [key] connection in
            let locked = try await connection.query("SELECT pg_try_advisory_xact_lock($1::bigint) AS ok", [AuditSealer.lock])
            guard try locked[0].decode("ok", as: Bool.self) else { return 0 }
            let rows = try await connection.query("""
                SELECT \(AuditEntry.columns(of: "e")), e.xid::text AS xid FROM audit_events e
                WHERE \(AuditSealer.afterLastSealed) AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY e.xid, e.id LIMIT $1
                """, [batch])
            guard let lastRow = rows.last else { return 0 }
            let through: (xid: String, id: Int64) = (try lastRow.decode("xid"), try lastRow.decode("id"))
            let entries = try rows.map(AuditEntry.init(row:))
            let tenants = Array(Set(entries.map(\.tenantID)))
            var heads: [UUID: (position: Int64, seal: [UInt8])] = [:]
            for row in try await connection.query("""
                SELECT DISTINCT ON (tenant_id) tenant_id, position, seal FROM audit_seals
                WHERE tenant_id = ANY($1::uuid[]) ORDER BY tenant_id, position DESC
                """, [PostgresArray(tenants)]) {
                heads[try row.decode("tenant_id")] = (try row.decode("position"), try row.decode("seal"))
            }
            // One stored seal per tenant: the chain runs through every entry, the seal after the last is kept with
            // each entry's digest (so a verifier names an entry that changed) and the latest of their times (so
            // retention deletes a seal only with all of its entries).
            var batches: [UUID: [AuditEntry]] = [:]
            for entry in entries { batches[entry.tenantID, default: []].append(entry) }
            var tenantIDs: [UUID] = [], positions: [Int64] = [], lastIDs: [Int64] = [], seals: [String] = []
            var times: [Int64] = [], ids: [String] = [], digests: [String] = []
            for (tenant, batch) in batches {
                let head = heads[tenant] ?? (0, AuditChain.genesis)
                let seal = AuditChain.seal(batch, first: head.position + 1, previous: head.seal, key: key)
                tenantIDs.append(tenant)
                positions.append(head.position + Int64(batch.count))
                lastIDs.append(batch[batch.count - 1].id)
                seals.append(Base16.encode(seal))
                times.append(batch.map(\.createdMicros).max() ?? 0)
                ids.append("{" + batch.map { String($0.id) }.joined(separator: ",") + "}")
                digests.append(Base16.encode(batch.flatMap(AuditChain.digest)))
            }
            _ = try await connection.query("""
                INSERT INTO audit_seals (tenant_id, position, event_id, seal, created_at, entries, digests)
                SELECT t, p, e, decode(s, 'hex'), timestamptz 'epoch' + c * interval '1 microsecond', i::bigint[], decode(d, 'hex')
                FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::text[])
                    AS u (t, p, e, s, c, i, d)
                """, [PostgresArray(tenantIDs), PostgresArray(positions), PostgresArray(lastIDs), PostgresArray(seals),
                      PostgresArray(times), PostgresArray(ids), PostgresArray(digests)])
            _ = try await connection.query("UPDATE audit_sealed_through SET xid = $1::xid8, id = $2",
                                           [through.xid, through.id])
            return entries.count
        }
    }

    /// Seals until nothing is pending.
    public func sealAll() async throws {
        while try await sealPending() > 0 {}
    }
}
