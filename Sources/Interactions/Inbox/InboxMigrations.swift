import Postgres

/// What the agents' inbox needs of the schema: counters that make an interaction's summary one row read (no count of
/// its messages per reader), the preview of its latest message, and the log of changes its streams follow.
enum InboxMigrations {
    static let all: [Migration] = [
        // Unread counts from counters: each side's messages on the interaction, and on each read position the other
        // side's messages it covers (counted once, when the position moves). `inbox_preview` is the latest message
        // (or, later, agents' note) as agents see it in their inbox: never shown to customers.
        //
        // `interaction_changes` has a row per change of an interaction, written in the change's transaction: the
        // writer's transaction id and a number from a sequence (no counter row that a tenant's writers would queue
        // on). Inbox streams read the changes that became visible between two snapshots (see `InboxPosition`).
        Migration(version: 304, name: "inbox", sql: """
            ALTER TABLE interactions ADD COLUMN customer_messages bigint NOT NULL DEFAULT 0,
                                     ADD COLUMN agent_messages bigint NOT NULL DEFAULT 0,
                                     ADD COLUMN inbox_preview jsonb;
            UPDATE interactions i SET customer_messages = m.customer, agent_messages = m.agent
            FROM (SELECT interaction_id,
                         count(*) FILTER (WHERE payload->>'sender_role' = 'customer') AS customer,
                         count(*) FILTER (WHERE payload->>'sender_role' = 'agent') AS agent
                  FROM interaction_events WHERE kind = 'message' GROUP BY interaction_id) m
            WHERE m.interaction_id = i.id;
            UPDATE interactions i SET inbox_preview = (
                SELECT \(InboxMigrations.preview(id: "e.payload->>'id'", kind: "'message'", text: "e.payload->>'text'",
                                                 role: "e.payload->>'sender_role'", at: "e.created_at"))
                FROM interaction_events e WHERE e.interaction_id = i.id AND e.kind = 'message'
                ORDER BY e.seq DESC LIMIT 1);
            ALTER TABLE interaction_reads ADD COLUMN messages_read bigint NOT NULL DEFAULT 0;
            UPDATE interaction_reads r SET messages_read = (
                SELECT count(*) FROM interaction_events e
                WHERE e.interaction_id = r.interaction_id AND e.kind = 'message'
                  AND e.payload->>'sender_role' <> r.reader_role AND e.seq <= r.read_through);
            CREATE SEQUENCE interaction_change_seq;
            CREATE TABLE interaction_changes (
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                interaction_id uuid NOT NULL,
                xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                seq bigint NOT NULL DEFAULT nextval('interaction_change_seq'),
                changed_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX interaction_changes_by_tenant ON interaction_changes (tenant_id, xid);
            """),
        // Agents' private notes: numbered within their interaction on a counter of their own, so that the log's
        // event ids — the only ids customers see — stay dense (1, 2, 3…) whatever notes are written between them.
        // `after_seq` is the log's last id when the note was written. Each note is also a change the inbox streams
        // deliver once (its own `xid` and `change_seq`, numbered after the interaction's change of the same write).
        Migration(version: 306, name: "notes", sql: """
            ALTER TABLE interactions ADD COLUMN last_note_seq bigint NOT NULL DEFAULT 0;
            CREATE TABLE interaction_notes (
                interaction_id uuid NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
                note_seq bigint NOT NULL,
                id uuid NOT NULL DEFAULT gen_random_uuid(),
                tenant_id uuid NOT NULL,
                author_id text NOT NULL,
                text text NOT NULL,
                after_seq bigint NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                change_seq bigint NOT NULL DEFAULT nextval('interaction_change_seq'),
                PRIMARY KEY (interaction_id, note_seq)
            );
            CREATE INDEX interaction_notes_by_tenant ON interaction_notes (tenant_id, xid);
            """),
        // Presence: what each agent chose (`online` or `away`) and the status last announced; and per replica, until
        // when an agent holds an inbox stream there (a lease the replica keeps renewing: a replica that dies stops
        // renewing, and its agents go offline after the lease and the grace).
        Migration(version: 307, name: "presence", sql: """
            CREATE TABLE agent_presence (
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                agent_id text NOT NULL,
                chosen text NOT NULL DEFAULT 'online' CHECK (chosen IN ('online', 'away')),
                status text NOT NULL DEFAULT 'offline' CHECK (status IN ('online', 'away', 'offline')),
                status_changed_at timestamptz NOT NULL DEFAULT now(),
                last_seen_at timestamptz,
                PRIMARY KEY (tenant_id, agent_id)
            );
            CREATE TABLE agent_connections (
                tenant_id uuid NOT NULL,
                agent_id text NOT NULL,
                replica_id uuid NOT NULL,
                connected_until timestamptz NOT NULL,
                PRIMARY KEY (tenant_id, agent_id, replica_id),
                FOREIGN KEY (tenant_id, agent_id) REFERENCES agent_presence (tenant_id, agent_id) ON DELETE CASCADE
            );
            """),
        // Automatic assignment: a tenant's setting, and per agent its open interactions (started, assigned to it)
        // and when it was last given one. A trigger keeps the count whatever changes an assignment or a state, so
        // manual claims count too; automatic assignment takes an agent's row with SKIP LOCKED and never goes past
        // the cap, while a tenant's interactions are still created in parallel.
        Migration(version: 308, name: "automatic assignment", sql: """
            CREATE TABLE tenant_settings (
                tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
                auto_assign text NOT NULL DEFAULT 'off' CHECK (auto_assign IN ('off', 'round_robin')),
                max_open_per_agent int NOT NULL DEFAULT 5 CHECK (max_open_per_agent BETWEEN 1 AND 10000)
            );
            ALTER TABLE agent_presence ADD COLUMN open_count int NOT NULL DEFAULT 0,
                                       ADD COLUMN last_assigned_at timestamptz;
            INSERT INTO agent_presence (tenant_id, agent_id, open_count)
            SELECT tenant_id, assigned_agent_id, count(*) FROM interactions
            WHERE state = 'started' AND assigned_agent_id IS NOT NULL GROUP BY 1, 2
            ON CONFLICT (tenant_id, agent_id) DO UPDATE SET open_count = excluded.open_count;
            CREATE FUNCTION agent_open_count() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                was_open boolean := TG_OP = 'UPDATE' AND OLD.state = 'started' AND OLD.assigned_agent_id IS NOT NULL;
                is_open boolean := NEW.state = 'started' AND NEW.assigned_agent_id IS NOT NULL;
            BEGIN
                IF was_open AND is_open AND OLD.assigned_agent_id = NEW.assigned_agent_id THEN RETURN NULL; END IF;
                IF was_open THEN
                    UPDATE agent_presence SET open_count = open_count - 1
                    WHERE tenant_id = OLD.tenant_id AND agent_id = OLD.assigned_agent_id;
                END IF;
                IF is_open THEN
                    INSERT INTO agent_presence (tenant_id, agent_id, open_count, last_assigned_at)
                    VALUES (NEW.tenant_id, NEW.assigned_agent_id, 1, now())
                    ON CONFLICT (tenant_id, agent_id) DO UPDATE
                        SET open_count = agent_presence.open_count + 1, last_assigned_at = now();
                END IF;
                RETURN NULL;
            END $$;
            CREATE TRIGGER interactions_agent_open_count AFTER INSERT OR UPDATE OF assigned_agent_id, state ON interactions
                FOR EACH ROW EXECUTE FUNCTION agent_open_count();
            CREATE INDEX interactions_waiting ON interactions (tenant_id, created_at)
                WHERE state = 'started' AND assigned_agent_id IS NULL;
            """),
        // Each agent's status changes, numbered: webhooks deliver them in this order.
        Migration(version: 309, name: "numbered status changes", sql: """
            ALTER TABLE agent_presence ADD COLUMN status_seq bigint NOT NULL DEFAULT 0;
            """),
        // Changes are kept for resuming for a day, then pruned: a BRIN index on their time (nearly free to keep on
        // an append-only table) finds the old ones, and the highest pruned transaction is remembered, so that a
        // position older than what is left is refused (its client starts over) rather than served with a hole.
        Migration(version: 310, name: "inbox changes pruned", sql: """
            CREATE INDEX interaction_changes_age ON interaction_changes USING brin (changed_at);
            CREATE TABLE inbox_pruned (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                below xid8 NOT NULL
            );
            """),
        // Keys the replicas share without being configured alike: made by the first that needs one.
        Migration(version: 305, name: "service keys", sql: """
            CREATE TABLE service_keys (
                name text PRIMARY KEY,
                key bytea NOT NULL CHECK (length(key) = 32),
                created_at timestamptz NOT NULL DEFAULT now()
            );
            """),
    ]

    /// The `inbox_preview` of a message or note, as SQL: its id, kind, text cut at 200 characters, sender's role,
    /// and time in microseconds since 1970.
    static func preview(id: String, kind: String, text: String, role: String, at: String) -> String {
        """
        jsonb_build_object('id', \(id), 'kind', \(kind), 'text', left(\(text), 200), 'sender_role', \(role),
                           'created_micros', (extract(epoch FROM \(at)) * 1000000)::bigint)
        """
    }
}
