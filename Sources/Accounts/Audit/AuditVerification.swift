import Foundation
import Postgres

/// Reads a tenant's chain from the database and checks it with the key: what `switchboard audit verify` prints.
public struct AuditVerification: Sendable {
    /// What a check found.
    public struct Report: Sendable {
        /// Links checked.
        public var checked = 0
        /// Where the chain breaks, in position order.
        public var findings: [AuditChainVerifier.Finding] = []
        /// Entries with no seal that are not waiting for one either (inserted behind the service's back).
        public var unsealedStrays: [Int64] = []
        /// Entries waiting for the sealer.
        public var pending = 0

        /// Whether the chain is whole.
        public var intact: Bool { findings.isEmpty && unsealedStrays.isEmpty }
    }

    let pool: PostgresPool

    /// Checks over `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Checks `tenant`'s chain with `key`, a thousand links at a time.
    public func verify(tenant: UUID, key: [UInt8]) async throws -> Report {
        var verifier = AuditChainVerifier(key: key)
        var report = Report()
        var after: Int64 = 0
        while true {
            // Fifty stored seals at a time (each closes at most a sealing round's entries), then their entries.
            let (seals, entries) = try await pool.withConnection { connection in
                let seals = try await connection.query("""
                    SELECT position, array_to_string(coalesce(entries, ARRAY[event_id]), ',') AS ids, digests, seal FROM audit_seals
                    WHERE tenant_id = $1::uuid AND position > $2 ORDER BY position LIMIT 50
                    """, [tenant, after])
                let closed = try seals.map { (row: $0, ids: try AuditVerification.ids($0)) }
                let entries = try await connection.query("""
                    SELECT \(AuditEntry.columns()) FROM audit_events WHERE id = ANY($1::bigint[]) AND tenant_id = $2::uuid
                    """, [PostgresArray(closed.flatMap(\.ids)), tenant]).map(AuditEntry.init(row:))
                return (closed, entries)
            }
            let byID = Dictionary(entries.map { ($0.id, $0) }, uniquingKeysWith: { (first: AuditEntry, _: AuditEntry) in first })
            for (row, ids) in seals {
                let position: Int64 = try row.decode("position")
                report.findings += verifier.check(AuditSealedBatch(
                    position: position, eventIDs: ids, entries: ids.map { byID[$0] },
                    digests: try row.decode("digests", as: [UInt8]?.self), seal: try row.decode("seal")))
                after = position
            }
            if seals.count < 50 { break }
        }
        report.checked = verifier.checked
        let strays = try await pool.withConnection { connection in
            try await connection.query("""
                WITH sealed AS (SELECT unnest(coalesce(entries, ARRAY[event_id])) AS id FROM audit_seals WHERE tenant_id = $1::uuid)
                SELECT e.id, \(AuditSealer.afterLastSealed) AS waiting FROM audit_events e
                WHERE e.tenant_id = $1::uuid AND NOT EXISTS (SELECT 1 FROM sealed WHERE sealed.id = e.id)
                ORDER BY e.id
                """, [tenant])
        }
        for row in strays {
            if try row.decode("waiting", as: Bool.self) { report.pending += 1 } else { report.unsealedStrays.append(try row.decode("id")) }
        }
        return report
    }

    /// The entry ids a stored seal closes (read as `1,2,3`).
    static func ids(_ row: PostgresRow) throws -> [Int64] {
        try row.decode("ids", as: String.self).split(separator: ",").compactMap { Int64($0) }
    }
}
