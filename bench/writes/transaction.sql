-- pgbench: a message as the service wrote it in a transaction of five round trips (BEGIN, the row lock, the append
-- with its inbox change, the notice, COMMIT): the reference the one-statement message is held to. The interaction
-- is drawn from bench_targets (n, id, tenant_id), which bench/writes.sh fills with the bench's interactions.
\set n random(1, :targets)
BEGIN;
SELECT i.state, i.assigned_agent_id, i.last_seq, t.id AS target
FROM bench_targets t JOIN interactions i ON i.id = t.id AND i.tenant_id = t.tenant_id
WHERE t.n = :n FOR UPDATE OF i \gset
WITH next AS (
    UPDATE interactions SET last_seq = last_seq + 1,
        customer_messages = customer_messages + (true AND :payload::jsonb->>'sender_role' = 'customer')::int,
        agent_messages = agent_messages + (true AND :payload::jsonb->>'sender_role' = 'agent')::int,
        inbox_preview = jsonb_build_object('id', :payload::jsonb->>'id', 'kind', 'message',
            'text', left(:payload::jsonb->>'text', 200), 'sender_role', :payload::jsonb->>'sender_role',
            'created_micros', (extract(epoch FROM now()) * 1000000)::bigint)
    WHERE id = :target::uuid RETURNING last_seq, tenant_id
), changed AS (
    INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, :target::uuid FROM next
)
INSERT INTO interaction_events (interaction_id, seq, kind, payload)
SELECT :target::uuid, last_seq, 'message', :payload::jsonb FROM next
RETURNING seq \gset
SELECT pg_notify('switchboard_interactions', :target::text || ':' || :seq::text);
COMMIT;
