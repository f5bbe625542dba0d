WITH target AS (
    SELECT id, state FROM interactions
    WHERE id = $1::uuid AND tenant_id = $2::uuid AND ($3::text IS NULL OR customer_id = $3)
), next AS (
    UPDATE interactions SET last_seq = last_seq + 1,
        customer_messages = customer_messages + (true AND $4::jsonb->>'sender_role' = 'customer')::int,
        agent_messages = agent_messages + (true AND $4::jsonb->>'sender_role' = 'agent')::int,
        inbox_preview = CASE WHEN true THEN jsonb_build_object('id', $4::jsonb->>'id', 'kind', 'message',
            'text', left($4::jsonb->>'text', 200), 'sender_role', $4::jsonb->>'sender_role',
            'created_micros', (extract(epoch FROM now()) * 1000000)::bigint) ELSE inbox_preview END
    WHERE id = (SELECT id FROM target) AND state = 'started'
    RETURNING last_seq, tenant_id
), changed AS (
    INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, $1::uuid FROM next
), appended AS (
    INSERT INTO interaction_events (interaction_id, seq, kind, payload)
    SELECT $1::uuid, last_seq, 'message', $4::jsonb FROM next
    RETURNING seq, '{"created_at":"'
        || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || $5 || seq || $6 AS answer
), recorded AS (
    INSERT INTO idempotency_keys (tenant_id, principal, key, request_hash, status, headers, body)
    SELECT $2::uuid, $7, $8, sha256($9::bytea), 201, '{"Content-Type": "application/json"}',
           convert_to(answer, 'UTF8')
    FROM appended WHERE $7::text IS NOT NULL
)
SELECT (SELECT state FROM target) AS state, a.answer,
       CASE WHEN a.seq IS NOT NULL THEN pg_notify('switchboard_interactions', $1::text || ':' || a.seq) END AS notified
FROM (SELECT 1) AS one LEFT JOIN appended a ON true
