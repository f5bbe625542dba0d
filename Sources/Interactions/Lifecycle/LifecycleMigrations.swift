import Postgres

/// The data lifecycle's schema (versions 312–319): a tenant's retention, legal holds, the indexes retention walks by,
/// and erasures with the redaction they apply.
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
            Migration(version: 313, name: "erasures", sql: """
            -- A user's erasure (GDPR Art. 17): requested, then carried out in short steps by whichever replica takes
            -- it. `user_id` is kept only while it runs (the record keeps no trace of whom it erased once complete);
            -- `pseudonym` is random and replaces the user id in what remains. `position` is how far the walk over
            -- the tenant's interactions (by id) has come.
            CREATE TABLE erasures (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                user_id text CHECK (user_id IS NULL OR length(user_id) BETWEEN 1 AND 200),
                pseudonym text NOT NULL UNIQUE,
                state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'completed')),
                phase text NOT NULL DEFAULT 'attachments' CHECK (phase IN ('attachments', 'interactions', 'records')),
                position uuid,
                messages_redacted bigint NOT NULL DEFAULT 0,
                subjects_redacted bigint NOT NULL DEFAULT 0,
                attachments_deleted bigint NOT NULL DEFAULT 0,
                webhook_messages_redacted bigint NOT NULL DEFAULT 0,
                idempotency_records_deleted bigint NOT NULL DEFAULT 0,
                sessions_revoked bigint NOT NULL DEFAULT 0,
                requested_at timestamptz NOT NULL DEFAULT now(),
                completed_at timestamptz,
                CHECK ((state = 'pending') = (user_id IS NOT NULL))
            );
            CREATE UNIQUE INDEX erasures_pending ON erasures (tenant_id, user_id) WHERE state = 'pending';
            CREATE INDEX erasures_by_request ON erasures (requested_at) WHERE state = 'pending';

            -- An event's payload, or a webhook's `data`, with user `u` erased: the text of a message they sent
            -- replaced by "" and `redacted` set (its attachments' metadata removed: their files are deleted), the
            -- subject of an interaction they opened removed, and every mention of their id replaced by `pseudonym`.
            CREATE FUNCTION erasure_redact(p jsonb, u text, pseudonym text) RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE AS $$
            DECLARE
                r jsonb := p;
                k text;
            BEGIN
                IF r->>'sender_id' = u AND r ? 'text' THEN
                    r := (r - 'attachments') || jsonb_build_object('text', '', 'redacted', true);
                END IF;
                IF r->>'customer_id' = u AND r ? 'subject' THEN
                    r := r || jsonb_build_object('subject', NULL);
                END IF;
                FOREACH k IN ARRAY ARRAY['sender_id', 'customer_id', 'reader_id', 'assigned_agent_id',
                                         'previous_agent_id', 'by', 'author_id', 'agent_id'] LOOP
                    IF r->>k = u THEN r := r || jsonb_build_object(k, pseudonym); END IF;
                END LOOP;
                RETURN r;
            END $$;
            """),
    ]
}
