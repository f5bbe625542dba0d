import Accounts
import Foundation
import HTTPServer
import Postgres

/// One-time sign-in links for the agent console: the tenant's backend (or an operator) mints one for an agent; the
/// page trades its code, once, for an agent session. Codes are 256 random bits, kept only as their SHA-256 (computed
/// by Postgres's `sha256()`, as for every secret).
public struct ConsoleLinks: Sendable {
    let pool: PostgresPool

    /// Links over `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// A minted link: its code (shown once) and when it stops working.
    public struct Minted: Sendable, Equatable {
        /// The code, for the link's fragment (`#code=…`).
        public let code: String
        /// When the link expires unused.
        public let expiresAt: Date
    }

    /// Longest life of a link.
    public static let maximumTTL = 600

    /// Mints a link for `agent` of `tenant`, living `ttlSeconds`; the session it opens lives `sessionTTLSeconds`.
    /// `keyID`: the API key minting it (revoking the key kills the link, and the session it opened).
    public func mint(tenant: UUID, agent: String, ttlSeconds: Int, sessionTTLSeconds: Int,
                     keyID: UUID?, by context: AuditContext) async throws -> Minted {
        var generator = SystemRandomNumberGenerator()
        let code = "scl_" + Base64URL.encode((0 ..< 32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let rows = try await pool.withConnection { connection in
            // The link and its audit entry (`console_link.created`, the agent as target) in one statement.
            try await connection.query("""
                WITH minted AS (
                    INSERT INTO console_links (code_hash, tenant_id, agent_id, api_key_id, session_ttl_seconds, expires_at)
                    VALUES (sha256(convert_to($1, 'UTF8')), $2::uuid, $3, $4::uuid, $5::int,
                            now() + make_interval(secs => $6::int))
                    RETURNING expires_at
                )
                SELECT expires_at, \(AuditLog.call(from: 7)) FROM minted
                """, [code, tenant, agent, keyID, sessionTTLSeconds, ttlSeconds]
                    + AuditLog.parameters("console_link.created", .user(agent), tenant: tenant, by: context))
        }
        return Minted(code: code, expiresAt: try rows[0].decode("expires_at"))
    }

    /// Trades `code` for a new agent session, once: nil when the code is unknown, used, expired, or its API key was
    /// revoked. The link is marked used in the transaction that opens the session (both or neither).
    public func redeem(_ code: String, accounts: AccountStore, request: Request) async throws
        -> (session: AccountStore.NewSession, tenant: UUID, agent: String)? {
        guard code.utf8.count <= 100 else { return nil }
        return try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                UPDATE console_links l SET used_at = now()
                WHERE l.code_hash = sha256(convert_to($1, 'UTF8')) AND l.used_at IS NULL AND l.expires_at > now()
                  AND (l.api_key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = l.api_key_id AND k.revoked_at IS NULL))
                RETURNING l.tenant_id, l.agent_id, l.api_key_id, l.session_ttl_seconds
                """, [code])
            guard let row = rows.first else { return nil }
            let tenant: UUID = try row.decode("tenant_id")
            let agent: String = try row.decode("agent_id")
            let ttl = Int(try row.decode("session_ttl_seconds", as: Int32.self))
            // The session's own entry records the redemption: the agent (by pseudonym) opened it from this address.
            let session = try await accounts.createSession(
                tenantID: tenant, userID: agent, role: .agent, ttlSeconds: ttl, keyID: try row.decode("api_key_id"),
                by: .consoleSignIn(agent: agent, request), on: connection)
            return (session, tenant, agent)
        }
    }

    /// Deletes links that can no longer be used (expired a day ago or more).
    public func prune() async throws {
        _ = try await pool.withConnection { connection in
            try await connection.query("DELETE FROM console_links WHERE expires_at < now() - interval '1 day'")
        }
    }
}
