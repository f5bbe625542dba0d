import Postgres

/// The console's schema: one-time sign-in links (versions 500–599).
public enum ConsoleMigrations {
    /// Migrations owned by this module.
    public static let all: [Migration] = [
        // A link's code is stored hashed (SHA-256), used at most once (`used_at`), and dies with its API key.
        Migration(version: 500, name: "console links", sql: """
            CREATE TABLE console_links (
                code_hash bytea PRIMARY KEY,
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                agent_id text NOT NULL,
                api_key_id uuid REFERENCES api_keys (id) ON DELETE CASCADE,
                session_ttl_seconds int NOT NULL,
                expires_at timestamptz NOT NULL,
                used_at timestamptz,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX console_links_age ON console_links (expires_at);
            """),
    ]
}
