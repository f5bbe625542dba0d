import Postgres

/// The audit trail's schema (versions 120–139): append-only entries written by `audit_record` in the action's own
/// transaction, users named by random pseudonyms, and seals chained afterwards by ``AuditSealer``.
public enum AuditMigrations {
    /// Migrations owned by the audit trail.
    public static let all: [Migration] = [
        Migration(version: 120, name: "audit trail", sql: """
            CREATE TABLE audit_events (
                id bigserial PRIMARY KEY,
                tenant_id uuid NOT NULL,
                actor_kind text NOT NULL CHECK (actor_kind IN ('admin', 'api_key', 'customer', 'agent', 'system')),
                actor_id text NOT NULL,
                action text NOT NULL,
                target_kind text NOT NULL,
                target_id text NOT NULL,
                request_id text NOT NULL DEFAULT '',
                address text NOT NULL DEFAULT '',
                created_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE INDEX audit_events_by_tenant ON audit_events (tenant_id, id);
            CREATE INDEX audit_events_by_time ON audit_events (created_at);
            -- Entries not sealed yet: the sealer takes them in batches, in the order they became visible.
            CREATE TABLE audit_pending (event_id bigint PRIMARY KEY);
            -- The chain of each tenant: seal n = HMAC(key, seal n-1 || n || entry), with a key kept out of the database.
            CREATE TABLE audit_seals (
                tenant_id uuid NOT NULL,
                position bigint NOT NULL,
                event_id bigint NOT NULL UNIQUE,
                seal bytea NOT NULL,
                -- The entry's own time, so retention removes an entry and its seal together.
                created_at timestamptz NOT NULL,
                PRIMARY KEY (tenant_id, position)
            );
            -- A user's pseudonym in the trail: random, so nothing derives it from the user id; erasure deletes the row.
            CREATE TABLE audit_pseudonyms (
                tenant_id uuid NOT NULL,
                user_id text NOT NULL,
                pseudonym text NOT NULL UNIQUE,
                PRIMARY KEY (tenant_id, user_id)
            );
            -- The last `interaction.viewed` entry of each agent and interaction (one per ten minutes).
            CREATE TABLE audit_views (
                tenant_id uuid NOT NULL,
                viewer text NOT NULL,
                interaction_id uuid NOT NULL,
                viewed_at timestamptz NOT NULL,
                PRIMARY KEY (tenant_id, viewer, interaction_id)
            );

            -- Entries and seals are never changed; they are deleted only by retention, which names the cut-off in
            -- switchboard.audit_purge_before for its own transaction.
            CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' AND OLD.created_at < coalesce(
                        nullif(current_setting('switchboard.audit_purge_before', true), '')::timestamptz, '-infinity') THEN
                    RETURN OLD;
                END IF;
                RAISE EXCEPTION 'the audit trail is append-only: % on % refused', TG_OP, TG_TABLE_NAME
                    USING ERRCODE = '42501';
            END $$;
            CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
                FOR EACH ROW EXECUTE FUNCTION audit_append_only();
            CREATE TRIGGER audit_seals_append_only BEFORE UPDATE OR DELETE ON audit_seals
                FOR EACH ROW EXECUTE FUNCTION audit_append_only();
            CREATE FUNCTION audit_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the audit trail is append-only: TRUNCATE of % refused', TG_TABLE_NAME USING ERRCODE = '42501';
            END $$;
            CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
                FOR EACH STATEMENT EXECUTE FUNCTION audit_no_truncate();
            CREATE TRIGGER audit_seals_no_truncate BEFORE TRUNCATE ON audit_seals
                FOR EACH STATEMENT EXECUTE FUNCTION audit_no_truncate();

            -- A user's pseudonym, made on first use. Each statement here reads afresh (READ COMMITTED), so a
            -- concurrent first use is seen after the insert waited for it.
            CREATE FUNCTION audit_pseudonym(p_tenant uuid, p_user text) RETURNS text LANGUAGE plpgsql AS $$
            DECLARE found text;
            BEGIN
                SELECT pseudonym INTO found FROM audit_pseudonyms WHERE tenant_id = p_tenant AND user_id = p_user;
                IF found IS NOT NULL THEN RETURN found; END IF;
                INSERT INTO audit_pseudonyms (tenant_id, user_id, pseudonym)
                VALUES (p_tenant, p_user, 'usr_' || replace(gen_random_uuid()::text, '-', ''))
                ON CONFLICT (tenant_id, user_id) DO NOTHING RETURNING pseudonym INTO found;
                IF found IS NOT NULL THEN RETURN found; END IF;
                SELECT pseudonym INTO found FROM audit_pseudonyms WHERE tenant_id = p_tenant AND user_id = p_user;
                RETURN found;
            END $$;

            -- One entry, in the caller's transaction. Users (as actor or as target) are recorded by pseudonym.
            CREATE FUNCTION audit_record(p_tenant uuid, p_actor_kind text, p_actor text, p_action text,
                                         p_target_kind text, p_target text, p_request text, p_address text)
            RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE entry bigint;
            BEGIN
                INSERT INTO audit_events (tenant_id, actor_kind, actor_id, action, target_kind, target_id, request_id, address)
                VALUES (p_tenant, p_actor_kind,
                        CASE WHEN p_actor_kind IN ('customer', 'agent') THEN audit_pseudonym(p_tenant, p_actor) ELSE p_actor END,
                        p_action, p_target_kind,
                        CASE WHEN p_target_kind = 'user' THEN audit_pseudonym(p_tenant, p_target) ELSE p_target END,
                        coalesce(p_request, ''), coalesce(p_address, ''))
                RETURNING id INTO entry;
                INSERT INTO audit_pending (event_id) VALUES (entry);
                RETURN entry;
            END $$;
            """),
        // Retention finds old entries by time; entries arrive in time order, so a BRIN index (a few pages, nearly
        // free to keep up) serves it instead of a B-tree written by every audited action.
        Migration(version: 121, name: "audit entries' time by BRIN", sql: """
            DROP INDEX audit_events_by_time;
            CREATE INDEX audit_events_by_time ON audit_events USING brin (created_at);
            """),
        // The sealer's queue was a row per entry (`audit_pending`), written by every audited action and deleted by the
        // sealer: a third of an entry's cost. Entries now carry the id of the transaction that wrote them, and the
        // sealer takes them in (xid, id) order from the last one sealed (`audit_sealed_through`, one row the sealer
        // moves each round), up to the oldest transaction still running: below it every writer has finished, so
        // nothing can appear behind the seals. Entries sealed before keep xid 1; those still queued get 2, so they
        // are sealed first, in their id order.
        Migration(version: 122, name: "audit entries sealed by transaction id", sql: """
            ALTER TABLE audit_events ADD COLUMN xid xid8;
            UPDATE audit_events SET xid = '1';
            UPDATE audit_events SET xid = '2' WHERE id IN (SELECT event_id FROM audit_pending);
            ALTER TABLE audit_events ALTER COLUMN xid SET DEFAULT pg_current_xact_id(), ALTER COLUMN xid SET NOT NULL;
            CREATE INDEX audit_events_by_xid ON audit_events (xid, id);
            CREATE TABLE audit_sealed_through (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                xid xid8 NOT NULL,
                id bigint NOT NULL
            );
            INSERT INTO audit_sealed_through (xid, id)
            SELECT '1', coalesce(max(e.id), 0) FROM audit_events e WHERE e.xid = '1';
            DROP TABLE audit_pending;
            -- PL/pgSQL, whose statements' plans are kept for the session (a SQL function's are made at every call).
            -- A user's pseudonym is looked up inline; only a first use calls audit_pseudonym to make one.
            CREATE OR REPLACE FUNCTION audit_record(p_tenant uuid, p_actor_kind text, p_actor text, p_action text,
                                                   p_target_kind text, p_target text, p_request text, p_address text)
            RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE
                actor text := p_actor;
                target text := p_target;
                entry bigint;
            BEGIN
                IF p_actor_kind IN ('customer', 'agent') THEN
                    SELECT pseudonym INTO actor FROM audit_pseudonyms WHERE tenant_id = p_tenant AND user_id = p_actor;
                    IF actor IS NULL THEN actor := audit_pseudonym(p_tenant, p_actor); END IF;
                END IF;
                IF p_target_kind = 'user' THEN
                    SELECT pseudonym INTO target FROM audit_pseudonyms WHERE tenant_id = p_tenant AND user_id = p_target;
                    IF target IS NULL THEN target := audit_pseudonym(p_tenant, p_target); END IF;
                END IF;
                INSERT INTO audit_events (tenant_id, actor_kind, actor_id, action, target_kind, target_id, request_id, address)
                VALUES (p_tenant, p_actor_kind, actor, p_action, p_target_kind, target, coalesce(p_request, ''), coalesce(p_address, ''))
                RETURNING id INTO entry;
                RETURN entry;
            END $$;
            """),
        // Seals per batch: the chain still runs through every entry, but only the seal after a round's last entry of
        // each tenant is stored, with the ids it closes (in chain order) and each one's digest; a seal row per entry
        // cost the database as much again as the entry. Seals stored before hold one entry each (`entries` null).
        Migration(version: 123, name: "audit seals per batch", sql: """
            ALTER TABLE audit_seals ADD COLUMN entries bigint[], ADD COLUMN digests bytea;
            """),
    ]
}
