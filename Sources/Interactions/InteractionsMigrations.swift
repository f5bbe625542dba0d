import Postgres

/// The interactions schema: support sessions, their append-only event log, and idempotency records.
public enum InteractionsMigrations {
    /// Migrations owned by this module (versions 300–399).
    public static let all: [Migration] = sessions + InboxMigrations.all + AttachmentsMigrations.all + LifecycleMigrations.all

    /// Interactions, their log, read positions and assignment.
    static let sessions: [Migration] = [
        Migration(version: 300, name: "interactions", sql: """
            CREATE TABLE interactions (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                customer_id text NOT NULL,
                subject text,
                state text NOT NULL DEFAULT 'started' CHECK (state IN ('started', 'ended', 'failed')),
                failure_reason text,
                created_at timestamptz NOT NULL DEFAULT now(),
                ended_at timestamptz
            );
            CREATE INDEX interactions_by_tenant ON interactions (tenant_id, created_at DESC, id DESC);
            CREATE INDEX interactions_by_customer ON interactions (tenant_id, customer_id, created_at DESC, id DESC);
            CREATE TABLE interaction_events (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                interaction_id uuid NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
                kind text NOT NULL CHECK (kind IN ('state', 'message', 'media')),
                payload jsonb NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX interaction_events_log ON interaction_events (interaction_id, seq);
            CREATE TABLE idempotency_keys (
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                principal text NOT NULL,
                key text NOT NULL,
                request_hash bytea NOT NULL,
                status int,
                headers jsonb,
                body bytea,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant_id, principal, key)
            );
            CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
            """),
        // Event ids count within their interaction (1, 2, 3…), so they reveal nothing of other tenants' activity,
        // and they have no holes: a writer takes the next number from the interaction's row, which it holds locked
        // until commit, so a rolled-back write gives its number back. A stream that sees seq n+2 after n knows it
        // missed n+1. Existing events are renumbered in their original order.
        Migration(version: 301, name: "per-interaction event ids", sql: """
            ALTER TABLE interactions ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;
            ALTER TABLE interaction_events DROP CONSTRAINT interaction_events_pkey;
            ALTER TABLE interaction_events RENAME COLUMN seq TO global_seq;
            ALTER TABLE interaction_events ADD COLUMN seq bigint;
            UPDATE interaction_events e SET seq = numbered.n
            FROM (SELECT global_seq, row_number() OVER (PARTITION BY interaction_id ORDER BY global_seq) AS n
                  FROM interaction_events) numbered
            WHERE numbered.global_seq = e.global_seq;
            ALTER TABLE interaction_events ALTER COLUMN seq SET NOT NULL;
            DROP INDEX interaction_events_log;
            ALTER TABLE interaction_events DROP COLUMN global_seq;
            ALTER TABLE interaction_events ADD PRIMARY KEY (interaction_id, seq);
            UPDATE interactions i
            SET last_seq = coalesce((SELECT max(seq) FROM interaction_events e WHERE e.interaction_id = i.id), 0);
            """),
        // Read positions: how far each reader has read, one row per (interaction, role, user). The role is part of
        // the key because a tenant may give one user id both roles, and the two positions mean different things.
        // The log takes `read` and `assignment` events (the inline CHECK of migration 300 got the default name).
        Migration(version: 302, name: "read positions", sql: """
            CREATE TABLE interaction_reads (
                interaction_id uuid NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
                reader_role text NOT NULL CHECK (reader_role IN ('customer', 'agent')),
                reader_id text NOT NULL,
                read_through bigint NOT NULL CHECK (read_through >= 0),
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (interaction_id, reader_role, reader_id)
            );
            ALTER TABLE interaction_events DROP CONSTRAINT interaction_events_kind_check;
            ALTER TABLE interaction_events ADD CONSTRAINT interaction_events_kind_check
                CHECK (kind IN ('state', 'message', 'media', 'read', 'assignment'));
            """),
        // Assignment: the agent handling an interaction (null: nobody yet). The index serves the agents' inbox
        // (`assigned=me` and `assigned=none`, newest first).
        Migration(version: 303, name: "assignment", sql: """
            ALTER TABLE interactions ADD COLUMN assigned_agent_id text;
            CREATE INDEX interactions_by_assignee ON interactions (tenant_id, assigned_agent_id, created_at DESC, id DESC);
            """),
    ]
}
