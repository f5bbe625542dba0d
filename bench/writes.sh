#!/usr/bin/env bash
# The write path: message POSTs (an agent, spread over WRITES_INTERACTIONS interactions, default 200) with
# `wrk -c32`, plain and with an Idempotency-Key each, with the database's `synchronous_commit` on and off (off: the
# disk no longer hides the software's cost). For each: POST/s, p50/p99, CPU per POST of Switchboard and of Postgres,
# and context switches per POST of Switchboard's threads (voluntary + involuntary, from /proc: no perf needed).
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_SECONDS (5), BENCH_ROUNDS (3)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
INTERACTIONS=${WRITES_INTERACTIONS:-200}
ADMIN=bench-admin-token-0123456789
port=""
bench_pick_port port 18990
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN "$SB_BIN"
sb_pid=${BENCH_PIDS[-1]}
url="http://127.0.0.1:$port"

json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
key=$(curl -sf -X POST "$url/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"name":"Writes"}' | json '["api_key"]')
session() { curl -sf -X POST "$url/v1/sessions" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d "{\"user_id\":\"$1\",\"role\":\"$2\",\"ttl_seconds\":86400}" | json '["token"]'; }
agent=$(session agent-1 agent)
ids=$(mktemp)
for ((n = 0; n < INTERACTIONS; n++)); do
    customer=$(session "customer-$n" customer)
    curl -sf -X POST "$url/v1/interactions" -H "Authorization: Bearer $customer" -H 'Content-Type: application/json' \
        -d '{"subject":"writes"}' | json '["id"]' >>"$ids"
done
database=$(psql "$DATABASE_URL" -qAt -c "SELECT current_database()")

ctx_switches() {  # every thread of the process, voluntary and involuntary
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { total += $2 } END { print total + 0 }'
}

rows=()
for commit in on off; do
    psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" SET synchronous_commit = $commit"
    # Pooled connections keep the setting they started with: a fresh process takes the new one.
    bench_stop_servers
    bench_start_server switchboard "$url/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
        DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN "$SB_BIN"
    sb_pid=${BENCH_PIDS[-1]}
    for idempotent in 0 1; do
        label="synchronous_commit=$commit, $([ "$idempotent" = 1 ] && echo "Idempotency-Key" || echo "plain")"
        for ((r = 1; r <= BENCH_ROUNDS; r++)); do
            sb_before=$(bench_pid_cpu_ms "$sb_pid") pg_before=$(bench_cpu_ms postgres) cs_before=$(ctx_switches "$sb_pid")
            raw="$BENCH_OUT/raw/writes-$commit-$idempotent-r$r.txt"
            WRITES_IDS=$ids WRITES_TOKEN=$agent WRITES_IDEMPOTENT=$idempotent \
                bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" --latency -s "$BENCH_DIR/writes.lua" "$url" >"$raw" 2>&1
            sb_ms=$(( $(bench_pid_cpu_ms "$sb_pid") - sb_before )) pg_ms=$(( $(bench_cpu_ms postgres) - pg_before ))
            cs=$(( $(ctx_switches "$sb_pid") - cs_before ))
            requests=$(awk '/requests in/ { print $1 }' "$raw")
            non2xx=$(awk '/Non-2xx/ { print $NF }' "$raw")
            rps=$(awk '/Requests\/sec/ { printf "%d", $2 }' "$raw")
            p50=$(awk '$1 == "50%" { print $2 }' "$raw") p99=$(awk '$1 == "99%" { print $2 }' "$raw")
            [ "${requests:-0}" -gt 0 ] || bench_die "no request completed: $(cat "$raw")"
            rows+=("| $label | $r | $rps | $p50 / $p99 | ${non2xx:-0} | $(( sb_ms * 1000 / requests )) | $(( pg_ms * 1000 / requests )) | $(( cs * 10 / requests / 10 )).$(( cs * 10 / requests % 10 )) |")
            bench_log "$label, round $r: $rps POST/s, Switchboard $(( sb_ms * 1000 / requests )) µs, Postgres $(( pg_ms * 1000 / requests )) µs, $(( cs / requests )) context switches per POST"
        done
    done
done
psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" RESET synchronous_commit"
rm -f "$ids"
out="$BENCH_OUT/writes.md"
{
    echo "## Message POSTs: the write path"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- \`wrk -t2 -c32 -d${BENCH_SECONDS}s --latency -s bench/writes.lua\`: an agent's messages over $INTERACTIONS interactions"
    echo
    echo "| run | round | POST/s | p50 / p99 | non-2xx | Switchboard µs/POST | Postgres µs/POST | context switches/POST (Switchboard) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out" >&2
