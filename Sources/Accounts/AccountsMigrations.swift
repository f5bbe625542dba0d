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
        // A session remembers the API key that opened it, so revoking the key revokes its sessions too (a leaked
        // key must not leave 30-day agent sessions behind). Sessions from before this migration have no key.
        Migration(version: 101, name: "sessions die with their key", sql: """
            ALTER TABLE sessions ADD COLUMN api_key_id uuid REFERENCES api_keys (id) ON DELETE CASCADE;
            CREATE INDEX sessions_by_key ON sessions (api_key_id) WHERE revoked_at IS NULL;
            CREATE INDEX sessions_by_user ON sessions (tenant_id, user_id) WHERE revoked_at IS NULL;
            """),
    ]
}
