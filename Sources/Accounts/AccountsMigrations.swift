import Postgres

/// The accounts schema: tenants, their API keys, and user sessions. Secrets are stored only as SHA-256.
public enum AccountsMigrations {
    /// Migrations owned by this module (versions 100–199).
    public static let all: [Migration] = [
        Migration(version: 100, name: "accounts", sql: """
            CREATE TABLE tenants (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE api_keys (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                key_hash bytea NOT NULL UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now(),
                revoked_at timestamptz
            );
            CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
            CREATE TABLE sessions (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                token_hash bytea NOT NULL UNIQUE,
                user_id text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 200),
                role text NOT NULL CHECK (role IN ('customer', 'agent')),
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                revoked_at timestamptz
            );
            CREATE INDEX sessions_expiry ON sessions (expires_at);
            """),
    ]
}
