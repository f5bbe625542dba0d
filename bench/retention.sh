#!/usr/bin/env bash
# Retention under load: message POSTs (`wrk -t2 -c32`, an agent over 200 interactions) while retention purges
# 1,000,000 events of 100 ended interactions, beside the same POSTs with nothing to purge: p50/p99 and their ratio
# (goal: p99 within 1.5× of the idle run), and how many events went during the measured run.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_SECONDS (5), BENCH_ROUNDS (3); RETENTION_EVENTS (1000000)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
EVENTS=${RETENTION_EVENTS:-1000000}
ADMIN=bench-admin-token-0123456789
port=""
bench_pick_port port 18997
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    RETENTION_INTERVAL_SECONDS=1 "$SB_BIN"
url="http://127.0.0.1:$port"
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
tenant_json=$(curl -sf -X POST "$url/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"name":"Retention"}')
key=$(json '["api_key"]' <<<"$tenant_json")
tenant=$(json '["id"]' <<<"$tenant_json")
session() { curl -sf -X POST "$url/v1/sessions" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d "{\"user_id\":\"$1\",\"role\":\"$2\",\"ttl_seconds\":86400}" | json '["token"]'; }
agent=$(session agent-1 agent)
ids=$(mktemp)
psql "$DATABASE_URL" -q <<SQL
INSERT INTO interactions (tenant_id, customer_id, subject)
SELECT '$tenant'::uuid, 'customer-' || n, 'live' FROM generate_series(1, 200) AS n;
SQL
psql "$DATABASE_URL" -qAt -c "SELECT id FROM interactions WHERE tenant_id = '$tenant' AND subject = 'live'" >"$ids"

load_old() {  # 100 interactions that ended 400 days ago, with EVENTS events between them
    bench_log "loading $EVENTS old events"
    psql "$DATABASE_URL" -q <<SQL
INSERT INTO interactions (tenant_id, customer_id, subject, state, ended_at, last_seq)
SELECT '$tenant'::uuid, 'old-' || n, 'old', 'ended', now() - interval '400 days', $EVENTS / 100 FROM generate_series(1, 100) AS n;
INSERT INTO interaction_events (interaction_id, seq, kind, payload)
SELECT i.id, g, 'message', jsonb_build_object('id', gen_random_uuid(), 'text', 'an old message ' || g, 'sender_role', 'customer',
                                              'sender_id', i.customer_id)
FROM interactions i CROSS JOIN generate_series(1, $EVENTS / 100) AS g WHERE i.tenant_id = '$tenant' AND i.subject = 'old';
SQL
}
old_events() {
    psql "$DATABASE_URL" -qAt -c "SELECT count(*) FROM interaction_events e JOIN interactions i ON i.id = e.interaction_id WHERE i.subject = 'old'"
}
settings() { curl -sf -X PATCH "$url/v1/settings" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$1" >/dev/null; }

measure() {  # measure RAW: p50 and p99 (ms) of message POSTs
    WRITES_IDS=$ids WRITES_TOKEN=$agent WRITES_IDEMPOTENT=0 \
        bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" --latency -s "$BENCH_DIR/writes.lua" "$url" >"$1" 2>&1
    [ "$(awk '/requests in/ { print $1 }' "$1")" -gt 0 ] || bench_die "no request completed: $(cat "$1")"
    awk '$1 == "50%" || $1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) }
         else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 }; printf "%.2f ", v }' "$1"
}

rows=()
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    settings '{"retention_days": null}'
    load_old
    read -r idle50 idle99 <<<"$(measure "$BENCH_OUT/raw/retention-idle-r$r.txt")"
    before=$(old_events)
    settings '{"retention_days": 30}'  # the next round of retention (within a second) starts the purge
    sleep 1
    read -r busy50 busy99 <<<"$(measure "$BENCH_OUT/raw/retention-purge-r$r.txt")"
    after=$(old_events)
    purged=$(( before - after ))
    [ "$purged" -gt 0 ] || bench_die "nothing was purged during the measured run"
    ratio=$(python3 -c "print(f'{$busy99 / $idle99:.2f}')")
    rows+=("| $r | $idle50 / $idle99 ms | $busy50 / $busy99 ms | **$ratio** | $purged of $before |")
    bench_log "round $r: p99 $busy99 ms during the purge against $idle99 ms idle ($ratio); $purged events purged meanwhile"
    while [ "$(old_events)" -gt 0 ]; do sleep 1; done  # the rest goes before the next round loads again
done

out="$BENCH_OUT/retention.md"
{
    echo "## Retention: message POSTs while a purge of $EVENTS events runs"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- \`wrk -t2 -c32 -d${BENCH_SECONDS}s\` message POSTs over 200 interactions; 100 interactions ended 400 days ago with $EVENTS events between them, purged by the service's retention (2,000 rows a transaction)"
    echo
    echo "| round | idle p50 / p99 | during the purge p50 / p99 | p99 ratio (goal ≤ 1.5) | events purged during the run |"
    echo "| ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out" >&2
