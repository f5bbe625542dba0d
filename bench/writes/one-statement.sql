-- pgbench: the one statement a message without an Idempotency-Key is now (InteractionStore.messageAloneStatement,
-- with the interaction drawn from bench_targets as in transaction.sql): what Postgres alone spends on a message.
\set n random(1, :targets)
WITH target AS (
    SELECT i.id, i.state FROM bench_targets t JOIN interactions i ON i.id = t.id AND i.tenant_id = t.tenant_id
    WHERE t.n = :n
), next AS (
    UPDATE interactions SET last_seq = last_seq + 1,
        customer_messages = customer_messages + (true AND :payload::jsonb->>'sender_role' = 'customer')::int,
        agent_messages = agent_messages + (true AND :payload::jsonb->>'sender_role' = 'agent')::int,
        inbox_preview = jsonb_build_object('id', :payload::jsonb->>'id', 'kind', 'message',
            'text', left(:payload::jsonb->>'text', 200), 'sender_role', :payload::jsonb->>'sender_role',
            'created_micros', (extract(epoch FROM now()) * 1000000)::bigint)
    WHERE id = (SELECT id FROM target) AND state = 'started'
    RETURNING id, last_seq, tenant_id
), changed AS (
    INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, id FROM next
), appended AS (
    INSERT INTO interaction_events (interaction_id, seq, kind, payload)
    SELECT id, last_seq, 'message', :payload::jsonb FROM next
    RETURNING interaction_id, seq, created_at
)
SELECT (SELECT state FROM target) AS state, a.seq, a.created_at,
       CASE WHEN a.seq IS NOT NULL THEN pg_notify('switchboard_interactions', a.interaction_id::text || ':' || a.seq) END
FROM (SELECT 1) AS one LEFT JOIN appended a ON true;
