import Postgres

/// The data lifecycle's schema (versions 312–319): a tenant's retention, legal holds, and the indexes retention
/// walks by.
enum LifecycleMigrations {
    static let all: [Migration] = [
        Migration(version: 312, name: "retention and legal holds", sql: """
            ALTER TABLE tenant_settings ADD COLUMN retention_days int
                CHECK (retention_days IS NULL OR retention_days BETWEEN 1 AND 36500);
            -- A user on legal hold (GDPR Art. 17(3)): neither retention nor erasure touches what is theirs.
            CREATE TABLE legal_holds (
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                user_id text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 200),
                reason text CHECK (reason IS NULL OR length(reason) <= 1000),
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant_id, user_id)
            );
            CREATE INDEX interactions_over ON interactions (ended_at) WHERE state IN ('ended', 'failed');
            CREATE INDEX interaction_changes_by_interaction ON interaction_changes (interaction_id);
            """),
    ]
}
