import Postgres

/// The data lifecycle's schema (versions 312–319): a tenant's retention, legal holds, the indexes retention walks by,
/// and erasures with the redaction they apply.
public enum LifecycleMigrations {
    /// The SQLSTATE of a session refused because its user's erasure is under way.
    public static let erasurePendingState = "SBE01"

    /// Migrations owned by the data lifecycle.
    public static let all: [Migration] = [
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
                -- Which interactions the walk visits: those the user opened, or (for a user who ever acted as an
                -- agent) all of the tenant's.
                scope text NOT NULL DEFAULT 'tenant' CHECK (scope IN ('opened', 'tenant')),
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

            -- No session is opened for a user while their erasure is under way: what they would write then could fall
            -- before or after the walk. The error's SQLSTATE is Switchboard's own; the HTTP edge answers it with 409.
            CREATE FUNCTION sessions_refused_while_erasing() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM erasures WHERE tenant_id = NEW.tenant_id AND user_id = NEW.user_id
                                                     AND state = 'pending') THEN
                    RAISE EXCEPTION 'this user''s data is being erased; no session can be opened until it completes'
                        USING ERRCODE = '\(LifecycleMigrations.erasurePendingState)';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER sessions_refused_while_erasing BEFORE INSERT ON sessions
                FOR EACH ROW EXECUTE FUNCTION sessions_refused_while_erasing();

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
