import Foundation
import Postgres

/// Tenants, API keys and sessions in Postgres. Secrets are hashed by the database (`sha256`) on the way in and
/// looked up by hash; the clear secret is returned once, at creation, and never stored.
public struct AccountStore: Sendable {
    let pool: PostgresPool

    /// A store over `pool`.
    public init(pool: PostgresPool) { self.pool = pool }

    /// A newly created tenant with its first API key.
    /// Encodes as the admin API and the command line both print it: `id`, `name`, `api_key_id`, `api_key`.
    public struct NewTenant: Sendable, Encodable {
        /// The tenant's id.
        public let id: UUID
        /// The tenant's name, as given.
        public let name: String
        /// The id of the first API key, for revoking it later.
        public let apiKeyID: UUID
        /// The first API key itself (`sbk_…`); shown only here, since only its hash is stored.
        public let apiKey: String

        enum CodingKeys: String, CodingKey {
            case id, name, apiKeyID = "api_key_id", apiKey = "api_key"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id.lowercased, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(apiKeyID.lowercased, forKey: .apiKeyID)
            try container.encode(apiKey, forKey: .apiKey)
        }
    }

    /// A newly issued API key.
    public struct NewKey: Sendable {
        /// The key's id, for revoking it.
        public let id: UUID
        /// The key itself (`sbk_…`); shown only here, since only its hash is stored.
        public let apiKey: String
        /// When the key was issued.
        public let createdAt: Date
    }

    /// A newly opened session.
    public struct NewSession: Sendable {
        /// The session's id, for revoking it; not a credential.
        public let id: UUID
        /// The bearer token (`sbs_…`) the app sends; shown only here, since only its hash is stored.
        public let token: String
        /// When the session stops being accepted (opening time plus its TTL).
        public let expiresAt: Date
    }

    /// Creates a tenant and its first API key, in one transaction with its audit entry.
    public func createTenant(name: String, by context: AuditContext) async throws -> NewTenant {
        let apiKey = SecretToken.generate(.apiKey)
        return try await pool.withTransaction { connection in
            let tenant = try await connection.query("INSERT INTO tenants (name) VALUES ($1) RETURNING id", [name])
            let tenantID: UUID = try tenant[0].decode("id")
            let key = try await connection.query(
                "INSERT INTO api_keys (tenant_id, key_hash) VALUES ($1::uuid, sha256(convert_to($2, 'UTF8'))) RETURNING id",
                [tenantID, apiKey])
            try await AuditLog.record("tenant.created", AuditTarget("tenant", tenantID), tenant: tenantID, by: context,
                                      on: connection)
            return NewTenant(id: tenantID, name: name, apiKeyID: try key[0].decode("id"), apiKey: apiKey)
        }
    }

    /// Issues another API key for a tenant, audited; nil when there is no such tenant.
    public func issueKey(tenantID: UUID, by context: AuditContext) async throws -> NewKey? {
        let apiKey = SecretToken.generate(.apiKey)
        return try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                INSERT INTO api_keys (tenant_id, key_hash)
                SELECT id, sha256(convert_to($2, 'UTF8')) FROM tenants WHERE id = $1::uuid
                RETURNING id, created_at
                """, [tenantID, apiKey])
            guard let row = rows.first else { return nil }
            let key = NewKey(id: try row.decode("id"), apiKey: apiKey, createdAt: try row.decode("created_at"))
            try await AuditLog.record("api_key.created", AuditTarget("api_key", key.id), tenant: tenantID, by: context,
                                      on: connection)
            return key
        }
    }

    /// Revokes one of a tenant's keys (idempotently), and with it every session the key opened (each announced on
    /// ``revocationChannel``); false when the tenant has no such key.
    public func revokeKey(tenantID: UUID, keyID: UUID, by context: AuditContext) async throws -> Bool {
        try await pool.withTransaction { connection in
            let rows = try await connection.query("""
                UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
                WHERE id = $1::uuid AND tenant_id = $2::uuid RETURNING id
                """, [keyID, tenantID])
            guard !rows.isEmpty else { return false }
            _ = try await AccountStore.revokeSessions(where: "api_key_id = $1::uuid", [keyID], on: connection)
            try await AuditLog.record("api_key.revoked", AuditTarget("api_key", keyID), tenant: tenantID, by: context,
                                      on: connection)
            return true
        }
    }

    /// Revokes every live session of one user of the tenant (sign out everywhere); returns how many there were.
    public func revokeSessions(tenantID: UUID, userID: String, by context: AuditContext) async throws -> Int {
        try await pool.withTransaction { connection in
            let count = try await AccountStore.revokeSessions(where: "tenant_id = $1::uuid AND user_id = $2",
                                                              [tenantID, userID], on: connection)
            try await AuditLog.record("sessions.revoked", .user(userID), tenant: tenantID, by: context, on: connection)
            return count
        }
    }

    /// Revokes every live session of one user in the caller's transaction (announced when it commits); returns how
    /// many there were. For an erasure, which revokes them with its request.
    public static func revokeSessions(tenantID: UUID, userID: String, on connection: PostgresConnection) async throws -> Int {
        try await revokeSessions(where: "tenant_id = $1::uuid AND user_id = $2", [tenantID, userID], on: connection)
    }

    /// Revokes the live sessions matching `condition` (fixed SQL with bound parameters) and announces each.
    private static func revokeSessions(where condition: String, _ parameters: [(any PostgresEncodable)?],
                                       on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query("""
            WITH revoked AS (
                UPDATE sessions SET revoked_at = now() WHERE \(condition) AND revoked_at IS NULL RETURNING id
            )
            SELECT count(pg_notify('\(revocationChannel)', id::text)) AS n FROM revoked
            """, parameters)
        return Int(try rows[0].decode("n", as: Int64.self))
    }

    /// Opens a session for a user of the tenant's app.
    /// `keyID` is the API key opening it: revoking that key revokes the session.
    public func createSession(tenantID: UUID, userID: String, role: Role, ttlSeconds: Int,
                              keyID: UUID? = nil, by context: AuditContext) async throws -> NewSession {
        try await pool.withConnection { connection in
            try await createSession(tenantID: tenantID, userID: userID, role: role, ttlSeconds: ttlSeconds, keyID: keyID,
                                    by: context, on: connection)
        }
    }

    /// Opens a session as ``createSession(tenantID:userID:role:ttlSeconds:keyID:)`` does, on `connection` (in the
    /// caller's transaction).
    /// The session and its audit entry (`session.created`, the user as target) are written by one statement.
    public func createSession(tenantID: UUID, userID: String, role: Role, ttlSeconds: Int, keyID: UUID?,
                              by context: AuditContext, on connection: PostgresConnection) async throws -> NewSession {
        let token = SecretToken.generate(.session)
        let rows = try await connection.query("""
            WITH opened AS (
                INSERT INTO sessions (tenant_id, token_hash, user_id, role, expires_at, api_key_id)
                VALUES ($1::uuid, sha256(convert_to($2, 'UTF8')), $3, $4, now() + make_interval(secs => $5::int), $6::uuid)
                RETURNING id, expires_at
            )
            SELECT id, expires_at, \(AuditLog.call(from: 7)) FROM opened
            """, [tenantID, token, userID, role.rawValue, ttlSeconds, keyID]
                + AuditLog.parameters("session.created", .user(userID), tenant: tenantID, by: context))
        return NewSession(id: try rows[0].decode("id"), token: token, expiresAt: try rows[0].decode("expires_at"))
    }

    /// Revokes a session (idempotently).
    /// Every replica hears of it on ``revocationChannel`` when the revocation commits (the session id as payload),
    /// so live streams opened with the session end within moments everywhere.
    public func revokeSession(id: UUID, tenantID: UUID, by context: AuditContext) async throws {
        _ = try await pool.withTransaction { connection in
            _ = try await AccountStore.revokeSessions(where: "id = $1::uuid", [id], on: connection)
            try await AuditLog.record("session.revoked", AuditTarget("session", id), tenant: tenantID, by: context,
                                      on: connection)
        }
    }

    /// The NOTIFY channel of session revocations (payload: the session id).
    public static let revocationChannel = "switchboard_revocations"

    /// Which of `sessions` are revoked, expired or gone: for checking live streams after missed revocation notices.
    public func endedSessions(among sessions: [UUID]) async throws -> [UUID] {
        guard !sessions.isEmpty else { return [] }
        let rows = try await pool.withConnection { connection in
            try await connection.query("""
                SELECT wanted.id FROM unnest($1::uuid[]) AS wanted (id)
                LEFT JOIN sessions s ON s.id = wanted.id
                WHERE s.id IS NULL OR s.revoked_at IS NOT NULL OR s.expires_at <= now()
                """, [PostgresArray(sessions)])
        }
        return try rows.map { try $0.decode("id") }
    }

    /// The API keys whose hashes are those of the secrets in `$1` (prepared: every batch of cold credentials runs it).
    static let apiKeyLookup = PreparedStatement("""
        SELECT wanted.token, k.id, k.tenant_id, k.revoked_at IS NOT NULL AS revoked
        FROM unnest($1::text[]) AS wanted (token)
        JOIN api_keys k ON k.key_hash = sha256(convert_to(wanted.token, 'UTF8'))
        """)

    /// The sessions whose token hashes are those of the secrets in `$1` (prepared, as above).
    static let sessionLookup = PreparedStatement("""
        SELECT wanted.token, s.id, s.tenant_id, s.user_id, s.role, s.expires_at, s.revoked_at IS NOT NULL AS revoked
        FROM unnest($1::text[]) AS wanted (token)
        JOIN sessions s ON s.token_hash = sha256(convert_to(wanted.token, 'UTF8'))
        """)

    /// What the database knows of each of `tokens` (all of `kind`), in one query; a secret it does not know is
    /// `.unknown`.
    public func lookup(_ tokens: [String], kind: SecretToken.Kind) async throws -> [String: TokenRecord] {
        guard !tokens.isEmpty else { return [:] }
        let statement = kind == .apiKey ? AccountStore.apiKeyLookup : AccountStore.sessionLookup
        let rows = try await pool.withConnection { connection in
            try await connection.query(statement, [PostgresArray(tokens)])
        }
        var records = Dictionary(uniqueKeysWithValues: tokens.map { ($0, TokenRecord.unknown) })
        for row in rows {
            let token: String = try row.decode("token")
            if try row.decode("revoked", as: Bool.self) {
                records[token] = .revoked
                continue
            }
            switch kind {
            case .apiKey:
                records[token] = .valid(Principal(tenantID: try row.decode("tenant_id"), credential: .apiKey(keyID: try row.decode("id"))))
            case .session:
                let role = Role(rawValue: try row.decode("role", as: String.self)) ?? .customer
                let credential = Principal.Credential.session(sessionID: try row.decode("id"),
                                                              userID: try row.decode("user_id"), role: role)
                records[token] = .valid(Principal(tenantID: try row.decode("tenant_id"), credential: credential,
                                                  expiresAt: try row.decode("expires_at")))
            }
        }
        return records
    }
}

/// The database's verdict on a secret.
public enum TokenRecord: Sendable {
    /// Known and not revoked (expiry is checked at each use).
    case valid(Principal)
    /// No such secret.
    case unknown
    /// Revoked.
    case revoked
}
