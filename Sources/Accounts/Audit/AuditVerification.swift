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
            let rows = try await pool.withConnection { connection in
                try await connection.query("""
                    SELECT s.position, s.event_id AS sealed_id, s.seal, e.id IS NOT NULL AS present,
                           \(AuditEntry.columns(of: "e"))
                    FROM audit_seals s LEFT JOIN audit_events e ON e.id = s.event_id AND e.tenant_id = s.tenant_id
                    WHERE s.tenant_id = $1::uuid AND s.position > $2 ORDER BY s.position LIMIT 1000
                    """, [tenant, after])
            }
            for row in rows {
                let position: Int64 = try row.decode("position")
                let present: Bool = try row.decode("present")
                report.findings += verifier.check(position: position, eventID: try row.decode("sealed_id"),
                                                  entry: present ? try AuditEntry(row: row) : nil, seal: try row.decode("seal"))
                after = position
            }
            if rows.count < 1000 { break }
        }
        report.checked = verifier.checked
        let strays = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT e.id, \(AuditSealer.afterLastSealed) AS waiting FROM audit_events e
                WHERE e.tenant_id = $1::uuid AND NOT EXISTS (SELECT 1 FROM audit_seals s WHERE s.event_id = e.id)
                ORDER BY e.id
                """, [tenant])
        }
        for row in strays {
            if try row.decode("waiting", as: Bool.self) { report.pending += 1 } else { report.unsealedStrays.append(try row.decode("id")) }
        }
        return report
    }
}
