import Postgres

/// The webhooks schema: endpoints, the outbox of messages (one per event and subscribed endpoint) and the attempt
/// log. The outbox is filled by a trigger on `interaction_events` (the Interactions module's table, read by
/// declared dependency), so a message exists exactly when its event committed: a rolled-back write leaves none, a
/// committed one cannot lose its message, and the Interactions module, which writes events, needs no knowledge of
/// webhooks. The body is built in the event's transaction from the event and its interaction as they stood then.
public enum WebhooksMigrations {
    /// Migrations owned by this module (versions 400–499).
    public static let all: [Migration] = [
        Migration(version: 400, name: "webhooks", sql: """
            CREATE TABLE webhook_endpoints (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                url text NOT NULL,
                events text[] NOT NULL,
                secret text NOT NULL,
                previous_secret text,
                previous_secret_expires_at timestamptz,
                disabled_at timestamptz,
                disabled_reason text,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant_id, created_at DESC, id DESC);

            CREATE TABLE webhook_messages (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                tenant_id uuid NOT NULL,
                interaction_id uuid NOT NULL,
                event_seq bigint NOT NULL,
                event_type text NOT NULL,
                body text NOT NULL,
                status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
                attempts int NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL DEFAULT now(),
                lease_until timestamptz,
                lease_token uuid,
                last_error text,
                created_at timestamptz NOT NULL DEFAULT now(),
                finished_at timestamptz,
                UNIQUE (endpoint_id, interaction_id, event_seq)
            );
            -- Claims scan this in order: within one due time, earlier events first, so the heads of interactions'
            -- queues come before the messages waiting behind them (which are also kept at least as late as their
            -- predecessor's next attempt, and at 'infinity' while their endpoint is disabled).
            CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at, event_seq) WHERE status = 'pending';
            CREATE INDEX webhook_messages_waiting ON webhook_messages (endpoint_id, interaction_id, event_seq)
                WHERE status = 'pending';
            CREATE INDEX webhook_messages_age ON webhook_messages (created_at);

            CREATE TABLE webhook_attempts (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                message_id uuid NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
                endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                attempt int NOT NULL,
                outcome text NOT NULL,
                response_status int,
                latency_ms int NOT NULL,
                error text,
                attempted_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);
            CREATE INDEX webhook_attempts_by_message ON webhook_attempts (message_id);
            CREATE INDEX webhook_attempts_age ON webhook_attempts (attempted_at);

            -- RFC 3339 in UTC with microseconds, as the API writes dates.
            CREATE FUNCTION webhook_time(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
                SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            $$;

            -- One outbox message per enabled endpoint of the tenant subscribed to the event's type, in the
            -- transaction that appends the event. The body is fixed here, so every attempt sends the same bytes.
            CREATE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                event_type text;
                interaction interactions%ROWTYPE;
                data jsonb;
            BEGIN
                event_type := \(firstEventTypes);
                IF event_type IS NULL THEN RETURN NULL; END IF;
                SELECT * INTO interaction FROM interactions WHERE id = NEW.interaction_id;
                IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e
                               WHERE e.tenant_id = interaction.tenant_id AND e.disabled_at IS NULL
                                 AND event_type = ANY (e.events)) THEN
                    RETURN NULL;
                END IF;
                IF NEW.kind = 'state' THEN
                    data := jsonb_build_object(
                        'id', interaction.id, 'customer_id', interaction.customer_id, 'subject', interaction.subject,
                        'state', interaction.state, 'failure_reason', interaction.failure_reason,
                        'created_at', webhook_time(interaction.created_at), 'ended_at', webhook_time(interaction.ended_at),
                        'seq', NEW.seq);
                ELSE
                    data := NEW.payload || jsonb_build_object('seq', NEW.seq, 'created_at', webhook_time(NEW.created_at));
                END IF;
                data := data || jsonb_build_object('tenant_id', interaction.tenant_id, 'interaction_id', NEW.interaction_id,
                                                   'event_id', NEW.interaction_id::text || ':' || NEW.seq);
                INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
                SELECT e.id, interaction.tenant_id, NEW.interaction_id, NEW.seq, event_type,
                       jsonb_build_object('type', event_type, 'timestamp', webhook_time(NEW.created_at), 'data', data)::text
                FROM webhook_endpoints e
                WHERE e.tenant_id = interaction.tenant_id AND e.disabled_at IS NULL AND event_type = ANY (e.events);
                PERFORM pg_notify('switchboard_webhooks', '');
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER interaction_events_webhooks AFTER INSERT ON interaction_events
                FOR EACH ROW EXECUTE FUNCTION webhook_outbox();
            """),
        // Claims find the heads of the queues through `webhook_messages_waiting`; the due-time index only served
        // the first claim design. Kept, it cost every message write an index entry, and it misled the planner:
        // a queue table's statistics lag, a burst's backlog looks empty to them, and the attempt record then
        // scanned every pending message through it instead of probing its own queue.
        Migration(version: 401, name: "webhook messages without the due-time index", sql: """
            DROP INDEX webhook_messages_due;
            """),
        // The trigger in one statement: the interaction and its subscribed endpoints are read by the insert that
        // queues the messages (before, a read of the interaction, a test for endpoints and the insert: three
        // statements for every event, two of them even for tenants without webhooks), and `pg_notify` only when a
        // message was queued. `webhook_time` is declared STABLE, as `to_char` is, so the planner inlines it.
        Migration(version: 402, name: "webhook outbox trigger in one statement", sql: """
            CREATE OR REPLACE FUNCTION webhook_time(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
                SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            $$;
            \(outboxFunction(eventType: firstEventTypes, channel: "switchboard_webhooks"))
            """),
        // The trigger maps kinds to types through `webhook_event_type`, generated from `WebhookEventType.source`
        // (before, the trigger spelled the mapping out a second time).
        Migration(version: 403, name: "webhook event types from one mapping", sql: installedEventTypeMapping
            + outboxFunction(eventType: "webhook_event_type(NEW.kind, NEW.payload->>'state')", channel: WebhookStore.channel)),
        // Notes and agents' statuses are not interaction events: each has a trigger of its own. Their messages wait in
        // queues of their own (`interaction_id` is the queue's key: a uuid made from the interaction and `notes`,
        // or from the tenant and the agent), numbered by `note_seq` and `status_seq`, so they keep their order
        // among themselves and never hold up, or wait behind, an interaction's messages.
        Migration(version: 404, name: "webhooks for notes and agents' statuses", sql: """
            CREATE FUNCTION webhook_note_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE queued bigint;
            BEGIN
                INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
                SELECT e.id, NEW.tenant_id, md5(NEW.interaction_id::text || ':notes')::uuid, NEW.note_seq, 'note.created',
                       jsonb_build_object('type', 'note.created', 'timestamp', webhook_time(NEW.created_at), 'data',
                           jsonb_build_object('id', NEW.id, 'note_seq', NEW.note_seq, 'author_id', NEW.author_id,
                                              'text', NEW.text, 'after_seq', NEW.after_seq,
                                              'created_at', webhook_time(NEW.created_at), 'tenant_id', NEW.tenant_id,
                                              'interaction_id', NEW.interaction_id,
                                              'event_id', NEW.interaction_id::text || ':note:' || NEW.note_seq))::text
                FROM webhook_endpoints e
                WHERE e.tenant_id = NEW.tenant_id AND e.disabled_at IS NULL AND 'note.created' = ANY (e.events);
                GET DIAGNOSTICS queued = ROW_COUNT;
                IF queued > 0 THEN PERFORM pg_notify('\(WebhookStore.channel)', ''); END IF;
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER interaction_notes_webhooks AFTER INSERT ON interaction_notes
                FOR EACH ROW EXECUTE FUNCTION webhook_note_outbox();

            CREATE FUNCTION webhook_agent_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE queued bigint;
            BEGIN
                INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
                SELECT e.id, NEW.tenant_id, md5(NEW.tenant_id::text || ':agent:' || NEW.agent_id)::uuid, NEW.status_seq,
                       'agent.status_changed',
                       jsonb_build_object('type', 'agent.status_changed', 'timestamp', webhook_time(NEW.status_changed_at),
                           'data', jsonb_build_object('agent_id', NEW.agent_id, 'status', NEW.status,
                                                      'previous_status', OLD.status,
                                                      'changed_at', webhook_time(NEW.status_changed_at),
                                                      'tenant_id', NEW.tenant_id,
                                                      'event_id', 'agent:' || NEW.agent_id || ':' || NEW.status_seq))::text
                FROM webhook_endpoints e
                WHERE e.tenant_id = NEW.tenant_id AND e.disabled_at IS NULL AND 'agent.status_changed' = ANY (e.events);
                GET DIAGNOSTICS queued = ROW_COUNT;
                IF queued > 0 THEN PERFORM pg_notify('\(WebhookStore.channel)', ''); END IF;
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER agent_presence_webhooks AFTER UPDATE OF status ON agent_presence
                FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION webhook_agent_outbox();
            """),
        // Retention removes an interaction's webhook messages with it (their bodies carry its texts).
        Migration(version: 405, name: "webhook messages by interaction", sql: """
            CREATE INDEX webhook_messages_by_interaction ON webhook_messages (interaction_id);
            """),
        // A first attempt that delivers (most do) is kept in its message's row rather than as a row of the attempt
        // log: the log's row cost a delivery a heap row, four index entries and two foreign-key checks (each a row
        // lock, the endpoint's shared by every concurrent record), the largest part of what recording it wrote.
        // The attempt log reads both (`WebhookStore.attempts`); a redelivery moves the kept attempt into the log.
        Migration(version: 406, name: "first delivered attempts in the message row", sql: """
            ALTER TABLE webhook_messages ADD COLUMN first_attempt_id uuid, ADD COLUMN first_attempted_at timestamptz,
                ADD COLUMN first_response_status int, ADD COLUMN first_latency_ms int;
            CREATE INDEX webhook_messages_first_attempts
                ON webhook_messages (endpoint_id, first_attempted_at DESC, first_attempt_id DESC)
                WHERE first_attempt_id IS NOT NULL;
            """),
        // A claim's lease changes no indexed column, so it can be a HOT update (a row version on the same page, no
        // index entries) when the page has room for it; packed full by a burst, none had, and each lease wrote a
        // new entry in all five of the outbox's indexes. Half of each page is left for the lease and the record's
        // versions (new pages only; a table rewritten later keeps the setting).
        Migration(version: 407, name: "webhook messages with room for their leases", sql: """
            ALTER TABLE webhook_messages SET (fillfactor = 50);
            """),
    ]

    /// The event types migrations 400 and 402 spelled out in the trigger (403 replaced them with
    /// `webhook_event_type`, generated from ``WebhookEventType``).
    static let firstEventTypes = """
        CASE NEW.kind
            WHEN 'message' THEN 'message.created'
            WHEN 'assignment' THEN 'interaction.assigned'
            WHEN 'read' THEN 'interaction.read'
            WHEN 'state' THEN CASE NEW.payload->>'state'
                WHEN 'started' THEN 'interaction.started'
                WHEN 'ended' THEN 'interaction.ended'
                WHEN 'failed' THEN 'interaction.failed' END
        END
        """

    /// The outbox trigger's function, which queues a message for each subscribed endpoint in one statement and
    /// notifies `channel` when it queued any; `eventType` is the SQL expression naming the event's type (NULL: none).
    /// Migrations 402 and 403 install it with the mapping of their time.
    static func outboxFunction(eventType: String, channel: String) -> String {
        """
        CREATE OR REPLACE FUNCTION webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            event_type text;
            queued bigint;
        BEGIN
            event_type := \(eventType);
            IF event_type IS NULL THEN RETURN NULL; END IF;
            INSERT INTO webhook_messages (endpoint_id, tenant_id, interaction_id, event_seq, event_type, body)
            SELECT e.id, i.tenant_id, NEW.interaction_id, NEW.seq, event_type,
                   jsonb_build_object('type', event_type, 'timestamp', webhook_time(NEW.created_at), 'data',
                       CASE WHEN NEW.kind = 'state' THEN jsonb_build_object(
                                'id', i.id, 'customer_id', i.customer_id, 'subject', i.subject, 'state', i.state,
                                'failure_reason', i.failure_reason, 'created_at', webhook_time(i.created_at),
                                'ended_at', webhook_time(i.ended_at), 'seq', NEW.seq)
                            ELSE NEW.payload || jsonb_build_object('seq', NEW.seq, 'created_at', webhook_time(NEW.created_at))
                       END || jsonb_build_object('tenant_id', i.tenant_id, 'interaction_id', NEW.interaction_id,
                                                 'event_id', NEW.interaction_id::text || ':' || NEW.seq))::text
            FROM interactions i
            JOIN webhook_endpoints e ON e.tenant_id = i.tenant_id AND e.disabled_at IS NULL AND event_type = ANY (e.events)
            WHERE i.id = NEW.interaction_id;
            GET DIAGNOSTICS queued = ROW_COUNT;
            IF queued > 0 THEN PERFORM pg_notify('\(channel)', ''); END IF;
            RETURN NULL;
        END
        $$;
        """
    }

    /// `webhook_event_type` as the database has it: ``WebhookEventType/mappingFunctionSQL`` when migration 403 was
    /// written, kept verbatim because an applied migration never changes. A test checks that the two still agree;
    /// when the mapping changes, add a migration installing the new text and keep its text here.
    static let installedEventTypeMapping = """
        CREATE OR REPLACE FUNCTION webhook_event_type(event_kind text, event_state text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE
                WHEN event_kind = 'state' AND event_state = 'started' THEN 'interaction.started'
                WHEN event_kind = 'message' THEN 'message.created'
                WHEN event_kind = 'assignment' THEN 'interaction.assigned'
                WHEN event_kind = 'read' THEN 'interaction.read'
                WHEN event_kind = 'state' AND event_state = 'ended' THEN 'interaction.ended'
                WHEN event_kind = 'state' AND event_state = 'failed' THEN 'interaction.failed'
            END
        $$;

        """
}
