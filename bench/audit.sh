#!/usr/bin/env bash
# The audit trail's cost under concurrency: 32 clients of one tenant (pgbench -c32 -j2) running two audited actions
# with their audit entry (`audit_record`) and without, rounds alternating, while a Switchboard process seals the
# chain (AUDIT_SEAL_KEY set):
#   - a session opened as `POST /v1/sessions` does (one insert: the cheapest audited action, so the entry's own
#     cost shows most);
#   - a claim as `POST /v1/interactions/{id}/claim` does (row lock, assignee, the event appended and announced) on
#     200 interactions, each always by the same one of 20 agents (agents' kept open counts are rows of their own,
#     which reassignments back and forth would make the thing measured).
# A hot row would serialise the audited transactions; the ratio of the rates says what the entries cost (goal:
# plain / audited ≤ 1.2).
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_SECONDS (5), BENCH_ROUNDS (3)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
ADMIN=bench-admin-token-0123456789
pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1 || true)
[ -x "$pgbench" ] || bench_die "pgbench not found (Debian's postgresql package has it)"
port=""
bench_pick_port port 18995
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    AUDIT_SEAL_KEY="$(openssl rand -hex 32)" "$SB_BIN"
url="http://127.0.0.1:$port"
tenant=$(curl -sf -X POST "$url/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"name":"Audit"}' | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")

# synchronous_commit off: the disk would otherwise set both rates (a claim's NOTIFY serialises commits behind each
# flush), hiding what the entries cost in CPU, which is what is measured here.
database=$(psql "$DATABASE_URL" -qAt -c "SELECT current_database()")
psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" SET synchronous_commit = off"
scripts="$BENCH_OUT/audit"
mkdir -p "$scripts"
# What createSession runs, without and with its audit entry (users spread over 10,000 ids, so pseudonyms are mostly
# looked up, sometimes made, as in life).
cat >"$scripts/plain.sql" <<'SQL'
\set user random(1, 10000)
INSERT INTO sessions (tenant_id, token_hash, user_id, role, expires_at)
VALUES (:tenant::uuid, sha256(convert_to(md5(random()::text), 'UTF8')), 'user-' || :user, 'customer', now() + interval '1 day')
RETURNING id, expires_at;
SQL
cat >"$scripts/audited.sql" <<'SQL'
\set user random(1, 10000)
WITH opened AS (
    INSERT INTO sessions (tenant_id, token_hash, user_id, role, expires_at)
    VALUES (:tenant::uuid, sha256(convert_to(md5(random()::text), 'UTF8')), 'user-' || :user, 'customer', now() + interval '1 day')
    RETURNING id, expires_at
)
SELECT id, expires_at, audit_record(:tenant::uuid, 'api_key', 'bench-key', 'session.created', 'user', 'user-' || :user,
                                    'bench', '127.0.0.1') FROM opened;
SQL

# 200 interactions to claim, numbered for the script.
psql "$DATABASE_URL" -q <<SQL
CREATE TABLE bench_interactions (n int PRIMARY KEY, id uuid NOT NULL);
INSERT INTO interactions (tenant_id, customer_id, subject)
SELECT '$tenant'::uuid, 'customer-' || n, 'bench' FROM generate_series(1, 200) AS n;
INSERT INTO bench_interactions SELECT row_number() OVER (ORDER BY id), id FROM interactions WHERE tenant_id = '$tenant'::uuid;
SQL
claim='\set n random(1, 200)
\set agent :n % 20 + 1
BEGIN;
SELECT i.id FROM interactions i JOIN bench_interactions b ON b.id = i.id WHERE b.n = :n FOR UPDATE OF i;
UPDATE interactions SET assigned_agent_id = '"'"'agent-'"'"' || :agent FROM bench_interactions b WHERE b.n = :n AND interactions.id = b.id;
WITH next AS (
    UPDATE interactions SET last_seq = last_seq + 1 FROM bench_interactions b
    WHERE b.n = :n AND interactions.id = b.id RETURNING interactions.id, interactions.last_seq, interactions.tenant_id
), changed AS (INSERT INTO interaction_changes (tenant_id, interaction_id) SELECT tenant_id, id FROM next)
INSERT INTO interaction_events (interaction_id, seq, kind, payload)
SELECT id, last_seq, '"'"'assignment'"'"', '"'"'{"assigned_agent_id": "agent"}'"'"'::jsonb FROM next;
SELECT pg_notify('"'"'bench'"'"', '"'"'claimed'"'"');'
{ echo "$claim"; echo "COMMIT;"; } >"$scripts/claim-plain.sql"
{ echo "$claim"
  echo "SELECT audit_record(:tenant::uuid, 'agent', 'agent-' || :agent, 'interaction.claimed', 'interaction', (SELECT id::text FROM bench_interactions WHERE n = :n), 'bench', '127.0.0.1');"
  echo "COMMIT;"; } >"$scripts/claim-audited.sql"

rate() {  # rate SCRIPT RAW: transactions per second
    bench_run "$pgbench" -n -M prepared -c32 -j2 -T"$BENCH_SECONDS" -D tenant="$tenant" -f "$1" "$DATABASE_URL" >"$2" 2>&1 \
        || bench_die "pgbench failed: $(tail -5 "$2")"
    awk '/^tps = / { printf "%d", $3 }' "$2"
}
rows=()
ratios=()
for action in session claim; do
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
        if [ "$action" = session ]; then plain_script=$scripts/plain.sql audited_script=$scripts/audited.sql
        else plain_script=$scripts/claim-plain.sql audited_script=$scripts/claim-audited.sql; fi
        plain=$(rate "$plain_script" "$BENCH_OUT/raw/audit-$action-plain-r$r.txt")
        audited=$(rate "$audited_script" "$BENCH_OUT/raw/audit-$action-audited-r$r.txt")
        ratio=$(python3 -c "print(f'{$plain / $audited:.2f}')")
        ratios+=("$ratio")
        rows+=("| $action | $r | $plain | $audited | **$ratio** |")
        bench_log "$action, round $r: $plain/s plain, $audited/s audited ($ratio×)"
    done
done
sealed=$(psql "$DATABASE_URL" -qAt -c "SELECT coalesce(sum(coalesce(cardinality(entries), 1)), 0) FROM audit_seals")
pending=$(psql "$DATABASE_URL" -qAt -c "SELECT count(*) - $sealed FROM audit_events")

out="$BENCH_OUT/audit.md"
{
    echo "## Audit trail: 32 concurrent clients of one tenant, with and without audit entries"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- \`pgbench -M prepared -c32 -j2 -T$BENCH_SECONDS\`: the session insert of \`POST /v1/sessions\`, and a claim's transaction on 200 interactions, each alone and with its \`audit_record\`; a Switchboard process sealing meanwhile ($sealed entries sealed, $pending waiting at the end)"
    echo
    echo "| action | round | plain tx/s | audited tx/s | plain / audited (goal ≤ 1.2) |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out" >&2
