#!/usr/bin/env bash
# Where a message POST's Postgres CPU goes, by backend: a plain tenant's POSTs and a webhook-subscribed tenant's, in
# turn, each under `wrk -t2 -c32` (bench/writes.lua, 200 interactions) for BENCH_SECONDS, the outbox drained after
# each. Per POST: Switchboard's CPU; Postgres's CPU by backend, named by `application_name` (`switchboard`: the pool
# that runs the POST's statement and its outbox trigger; `switchboard-webhooks`: the delivery worker's claims and
# records; `switchboard-listener`: the LISTEN connection each NOTIFY wakes) and by background process (walwriter,
# autovacuum, …), read from /proc and pg_stat_activity; and from /metrics the statements, outbox claims and delivery
# attempts. It tells which of a webhook's costs are the POST's, the worker's or the listener's (bench/writes.sh
# gives their sum, bench/delivery.sh the worker's alone).
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_SECONDS (5), BENCH_ROUNDS (3)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
bench_build_c_baseline
ADMIN=bench-admin-token-0123456789
port="" hook_port=""
bench_pick_port port 18890
bench_pick_port hook_port 18895
url="http://127.0.0.1:$port"
bench_start_server receiver "http://127.0.0.1:$hook_port/count" -- env PORT="$hook_port" HOST=127.0.0.1 THREADS=1 "$BENCH_C_BIN"
bench_start_server switchboard "$url/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    METRICS_TOKEN=$ADMIN WEBHOOK_ALLOW_PRIVATE_TARGETS=1 "$SB_BIN"
sb=${BENCH_PIDS[-1]}

# tenant NAME IDS [HOOK]: a tenant with an agent and 200 open interactions (ids in the file IDS), subscribed to
# message.created at the receiver when HOOK is set; prints the agent's token.
tenant() {
    python3 -I - "$port" "$ADMIN" "$1" "$2" "${3:+http://127.0.0.1:$hook_port/hook}" <<'PY'
import http.client, json, sys
port, admin, name, ids_file, hook = sys.argv[1:6]
connection = http.client.HTTPConnection("127.0.0.1", int(port))
def post(path, token, body):
    connection.request("POST", path, body=json.dumps(body),
                       headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    answer = connection.getresponse()
    return json.loads(answer.read())
created = post("/v1/admin/tenants", admin, {"name": name})
agent = post("/v1/sessions", created["api_key"], {"user_id": "agent-1", "role": "agent", "ttl_seconds": 86400})
customer = post("/v1/sessions", created["api_key"], {"user_id": "customer-1", "role": "customer", "ttl_seconds": 86400})
ids = [post("/v1/interactions", customer["token"], {"subject": "split %d" % n})["id"] for n in range(200)]
if hook:
    post("/v1/webhooks/endpoints", created["api_key"], {"url": hook, "events": ["message.created"]})
open(ids_file, "w").write("\n".join(ids) + "\n")
print(agent["token"])
PY
}
plain_ids=$BENCH_OUT/raw/split-plain-ids.txt hook_ids=$BENCH_OUT/raw/split-hook-ids.txt
plain_token=$(tenant "Split, plain" "$plain_ids")
hook_token=$(tenant "Split, webhook" "$hook_ids" hook)

# metric NAME: the sum of every series of NAME on /metrics.
metric() {
    curl -sf -H "Authorization: Bearer $ADMIN" "$url/metrics" | awk -v m="$1" '$1 ~ "^" m { s += $NF } END { printf "%d\n", s }'
}
# snapshot FILE: every Postgres process's CPU ticks so far, with its name (application_name, else its process title).
snapshot() {
    psql "$DATABASE_URL" -AtF '|' -c "SELECT pid, coalesce(nullif(application_name, ''), backend_type) FROM pg_stat_activity" \
        | awk -F '|' '{ print $1 "|" $2 }' >"$1.names"
    for pid in $(pgrep -f "postgres:" || true); do
        [ -r "/proc/$pid/stat" ] || continue
        awk -v pid="$pid" '{ line = $0; sub(/^.*\) /, "", line); split(line, f, " "); print pid "|" f[12] + f[13] }' \
            "/proc/$pid/stat" 2>/dev/null || true
    done >"$1"
}
tick=$(getconf CLK_TCK)
rows=()
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for kind in plain webhook; do
        ids=$plain_ids token=$plain_token
        [ "$kind" = webhook ] && ids=$hook_ids token=$hook_token
        raw="$BENCH_OUT/raw/split-$kind-r$r.txt" before="$BENCH_OUT/raw/split-before" after="$BENCH_OUT/raw/split-after"
        bench_webhook_drain
        snapshot "$before"
        sb0=$(bench_pid_cpu_ms "$sb") q0=$(metric switchboard_db_query_duration_seconds_count)
        c0=$(metric switchboard_webhook_claims_total) a0=$(metric switchboard_webhook_attempts_total)
        WRITES_IDS=$ids WRITES_TOKEN=$token bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" -s "$BENCH_DIR/writes.lua" "$url" >"$raw" 2>&1
        bench_webhook_drain
        snapshot "$after"
        sb1=$(bench_pid_cpu_ms "$sb") q1=$(metric switchboard_db_query_duration_seconds_count)
        c1=$(metric switchboard_webhook_claims_total) a1=$(metric switchboard_webhook_attempts_total)
        posts=$(awk '/requests in/ { print $1 }' "$raw")
        [ "${posts:-0}" -gt 0 ] || bench_die "no POST completed ($kind, round $r): $(cat "$raw")"
        # Postgres's CPU per POST by name, in µs: the processes present at the end, less what each had at the start.
        split=$(python3 -I - "$before" "$after" "$posts" "$tick" <<'PY'
import collections, sys
before_file, after_file, posts, tick = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def ticks(path):
    return {pid: int(value) for pid, value in (line.strip().split("|") for line in open(path) if "|" in line)}
names = {}
for path in (before_file + ".names", after_file + ".names"):
    for line in open(path):
        if "|" in line:
            pid, name = line.strip().split("|", 1)
            names[pid] = name
start, end = ticks(before_file), ticks(after_file)
spent = collections.Counter()
for pid, value in end.items():
    used = value - start.get(pid, 0)
    if used > 0:
        spent[names.get(pid, "other")] += used
total = sum(spent.values())
order = ["switchboard", "switchboard-webhooks", "switchboard-listener"]
cells = [spent.pop(name, 0) for name in order]
cells.append(sum(spent.values()))
print(" ".join(str(round(c * 1_000_000 / tick / posts)) for c in cells + [total]))
PY
)
        read -r pool worker listener others pg_all <<<"$split"
        own=$(( (sb1 - sb0) * 1000 / posts ))
        per() { awk -v d="$1" -v n="$posts" 'BEGIN { printf "%.2f", d / n }'; }
        rows+=("| $r | $kind | $posts | $own | $pool | $worker | $listener | $others | $pg_all | $(per $((q1 - q0))) | $(per $((c1 - c0))) | $(per $((a1 - a0))) |")
        bench_log "round $r, $kind: $posts POSTs; per POST Switchboard $own µs, Postgres $pg_all µs (pool $pool, worker $worker, listener $listener, others $others)"
    done
done

out="$BENCH_OUT/postgres-split.md"
{
    echo "## A message POST's Postgres CPU by backend, plain and with a subscribed webhook"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- \`wrk -t2 -c32 -d${BENCH_SECONDS}s -s bench/writes.lua\`, an agent's messages over 200 interactions; the outbox drained after each run"
    echo
    echo "| round | tenant | POSTs | Switchboard µs/POST | Postgres: pool µs | delivery worker µs | listener µs | other processes µs | Postgres, all µs | statements/POST | claims/POST | attempts/POST |"
    echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out" >&2
