#!/usr/bin/env bash
# The write path: message POSTs (an agent, spread over WRITES_INTERACTIONS interactions, default 200) with
# `wrk -t2 -c32`, in one run beside the references that measure them, with the database's `synchronous_commit` on and
# off (off: the disk no longer hides the software's cost). In each round, one after the other:
#   - Switchboard, plain; with an Idempotency-Key each; plain to a tenant with a webhook endpoint subscribed to
#     message.created (delivered to the raw-C baseline's POST /hook; its CPU is counted until the outbox drains, so a
#     POST carries its delivery); and the agent's read positions moving one event at a time over the same
#     interactions (bench/writes_read.lua; each read writes the position and a `read` event); a customer opening
#     interactions (bench/writes_create.lua); and the agent claiming the interactions and unassigning them in turn
#     (bench/writes_assign.lua; each change logs an `assignment` event and an audit entry); and the agent typing and
#     then not, in turn, over the same interactions (bench/writes.lua with WRITES_ACTION=typing; not stored, each one
#     a statement that locks the row and sends the notice while the interaction is live);
#   - pgbench -M prepared -c8 running the transaction a message was before it became one statement
#     (bench/writes/transaction.sql: BEGIN, the row lock, the append, the notice, COMMIT) on the same interactions;
#   - FastAPI + uvicorn (2 workers) + asyncpg running that same transaction (bench/fastapi/app.py), under the same wrk
#     load (BENCH_FASTAPI=0 skips it; a machine without PyPI skips it with a note);
#   - the same POSTs to bench/c-baseline/message.c: libmicrohttpd and libpq in the leanest C, running the very statement
#     Switchboard runs (bench/c-baseline/message.sql), so that Switchboard's CPU per POST has a reference doing its work.
# For each: POST/s, p50/p99, CPU per POST of Switchboard (or the peer), of Postgres and of the client (wrk; pgbench is
# its own), and of the three together (on cores they share, what sets the rate), context switches per POST of
# the server's threads (voluntary + involuntary switches from /proc, the count `perf stat -e context-switches` reads),
# and the goal ratios: Switchboard plain / pgbench, Switchboard plain / FastAPI, idempotent / plain CPU, and
# Switchboard's CPU per POST / C's; and C's POST/s / pgbench (what the leanest server reaches against pgbench on the
# same cores, the ceiling of the POST/s goal on this machine) beside Switchboard's POST/s / C's.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_SECONDS (5), BENCH_ROUNDS (3)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
command -v pgbench >/dev/null || bench_die "pgbench not found (Debian: postgresql-client)"
bench_build_c_baseline
bench_build_message_peer
INTERACTIONS=${WRITES_INTERACTIONS:-200}
ADMIN=bench-admin-token-0123456789
port="" hook_port="" fa_port="" c_port=""
bench_pick_port port 18990
bench_pick_port hook_port 18995
bench_pick_port fa_port 18997
bench_pick_port c_port 18999
url="http://127.0.0.1:$port" c_url="http://127.0.0.1:$c_port"
C_TOKEN=bench-c-message-peer-token-0123456789
bench_start_server receiver "http://127.0.0.1:$hook_port/count" -- env PORT="$hook_port" HOST=127.0.0.1 THREADS=1 "$BENCH_C_BIN"
start_switchboard() {
    bench_start_server switchboard "$url/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
        DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
        WEBHOOK_ALLOW_PRIVATE_TARGETS=1 "$SB_BIN"
    sb_pid=${BENCH_PIDS[-1]}
}
start_switchboard

# field NAME: the string field NAME of the JSON object on stdin (ids and tokens: no escapes in them). A python3 per
# call costs a third of a second where python3 is a version manager's shim, and setting up takes 800 calls.
field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }
post() { curl -sf -X POST "$url$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$3"; }
# A tenant with an agent and INTERACTIONS open interactions (ids in the file $2); prints "tenant-id api-key agent-token".
tenant() {
    local created key agent customer
    created=$(post /v1/admin/tenants "$ADMIN" "{\"name\":\"$1\"}")
    key=$(echo "$created" | field api_key)
    agent=$(post /v1/sessions "$key" '{"user_id":"agent-1","role":"agent","ttl_seconds":86400}' | field token)
    : >"$2"
    for ((n = 0; n < INTERACTIONS; n++)); do
        customer=$(post /v1/sessions "$key" "{\"user_id\":\"customer-$n\",\"role\":\"customer\",\"ttl_seconds\":86400}" | field token)
        post /v1/interactions "$customer" '{"subject":"writes"}' | field id >>"$2"
    done
    echo "$(echo "$created" | field id) $key $agent $customer"
}
ids=$BENCH_OUT/raw/writes-ids.txt hook_ids=$BENCH_OUT/raw/writes-hook-ids.txt
read -r tenant_id _ agent customer < <(tenant Writes "$ids")
read -r _ hook_key hook_agent _ < <(tenant "Writes with a webhook" "$hook_ids")
post /v1/webhooks/endpoints "$hook_key" "{\"url\":\"http://127.0.0.1:$hook_port/hook\",\"events\":[\"message.created\"]}" >/dev/null
database=$(psql "$DATABASE_URL" -qAt -c "SELECT current_database()")
# pgbench draws its interactions from this table: the same ones the POSTs write to.
psql "$DATABASE_URL" -q -c "DROP TABLE IF EXISTS bench_targets" \
    -c "CREATE TABLE bench_targets (n int PRIMARY KEY, id uuid NOT NULL, tenant_id uuid NOT NULL)"
awk -v tenant="$tenant_id" '{ printf "%d\t%s\t%s\n", NR, $1, tenant }' "$ids" \
    | psql "$DATABASE_URL" -q -c "COPY bench_targets FROM STDIN"
start_c_peer() {
    # Its pool: as many connections as Switchboard's (DATABASE_POOL_SIZE, default 10).
    bench_start_server c-message "$c_url/healthz" -- \
        env PORT="$c_port" HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" WORKERS="${DATABASE_POOL_SIZE:-10}" \
        MESSAGE_SQL="$BENCH_DIR/c-baseline/message.sql" MESSAGE_TOKEN=$C_TOKEN MESSAGE_TENANT="$tenant_id" \
        MESSAGE_USER=agent-1 MESSAGE_ROLE=agent "$BENCH_MESSAGE_BIN"
    c_pid=${BENCH_PIDS[-1]}
}
payload='{"id":"00000000-0000-4000-8000-000000000000","sender_id":"agent-1","sender_role":"agent","text":"a message of the bench"}'

fastapi="" fa_pid=""
if [ "${BENCH_FASTAPI:-1}" != 0 ]; then
    if venv=$("$BENCH_ROOT/bench/fastapi/setup.sh"); then
        start_fastapi() {
            bench_start_server fastapi "http://127.0.0.1:$fa_port/docs" -- env DATABASE_URL="$DATABASE_URL" \
                BENCH_TENANT="$tenant_id" "$venv/bin/uvicorn" app:app --app-dir "$BENCH_ROOT/bench/fastapi" --workers 2 \
                --loop uvloop --http httptools --no-access-log --log-level error --host 127.0.0.1 --port "$fa_port"
            fa_pid=${BENCH_PIDS[-1]}
        }
        fastapi="http://127.0.0.1:$fa_port"
    else
        bench_log "note: the FastAPI reference could not be installed (bench/fastapi/setup.sh); its rows are skipped"
    fi
fi

# What this script's exited children spent: the load's client once it is done (pgbench, or wrk), and the few psql,
# awk and cat of the set-up and of the webhook drain's polls.
children_cpu_ms() {
    awk -v tick="$(getconf CLK_TCK)" '{ line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
        printf "%d\n", (f[14] + f[15]) * 1000 / tick }' "/proc/$$/stat"
}

rows=() summary=() pg_ratios=() cpus=() key_ratios=() hook_extras=() c_ratios=() c_cpus=() c_pg_ratios=() c_rps_ratios=() all_sb=() all_c=() all_pgbench=()
declare -A RPS SB PG CS CL ALL
# measure LABEL KEY KIND: one run of KIND (sb, sb-key, sb-hook, pgbench, fastapi); appends its row, keeps its figures.
measure() {
    local label=$1 key=$2 kind=$3 raw="$BENCH_OUT/raw/writes-$2.txt"
    local pid=$sb_pid
    [ "$kind" = fastapi ] && pid=$fa_pid
    [ "$kind" = c ] && pid=$c_pid
    # The client's CPU is what the exited children spent around the load alone (not the set-up's psql, nor the
    # webhook drain's polls).
    local cpu_before pg_before cs_before client_before client_after
    client_before=$(children_cpu_ms)
    cpu_before=$( [ "$kind" = fastapi ] && bench_tree_cpu_ms "$pid" || bench_pid_cpu_ms "$pid")
    [ "$kind" = pgbench ] && cpu_before=$(children_cpu_ms)
    pg_before=$(bench_cpu_ms postgres) cs_before=$(bench_ctx_switches "$pid")
    local requests rps p50 p99 errors
    if [ "$kind" = pgbench ]; then
        bench_run pgbench -n -M prepared -c8 -j2 -T"$BENCH_SECONDS" -D targets="$INTERACTIONS" -D payload="$payload" \
            -f "$BENCH_DIR/writes/transaction.sql" "$DATABASE_URL" >"$raw" 2>&1
        client_after=$(children_cpu_ms)
        requests=$(awk '/number of transactions actually processed/ { split($NF, a, "/"); print a[1] }' "$raw")
        rps=$(awk '/^tps = / { printf "%d", $3 }' "$raw")
        p50=$(awk '/latency average/ { print $4 "ms" }' "$raw") p99="-"
        errors=$(awk '/number of failed transactions/ { print $5 }' "$raw")
    else
        local base=$url list=$ids token=$agent idempotent=0 path=/v1/interactions/ action=messages
        case $kind in
            sb-key) idempotent=1 ;;
            sb-typing) action=typing ;;
            sb-hook) list=$hook_ids token=$hook_agent ;;
            fastapi) base=$fastapi path=/interactions/ ;;
            c) base=$c_url token=$C_TOKEN ;;
        esac
        if [ "$kind" = sb-create ] || [ "$kind" = sb-claim ]; then
            local script=writes_assign.lua
            [ "$kind" = sb-create ] && script=writes_create.lua token=$customer
            WRITES_IDS=$list WRITES_TOKEN=$token \
                bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" --latency -s "$BENCH_DIR/$script" "$base" >"$raw" 2>&1
        elif [ "$kind" = sb-read ]; then
            # Each interaction's position moves from just past where the agent's position is now.
            psql "$DATABASE_URL" -qAt -F ' ' -c "SELECT i.id, coalesce(r.read_through, 0) + 1 FROM bench_targets t
                JOIN interactions i ON i.id = t.id
                LEFT JOIN interaction_reads r ON r.interaction_id = i.id AND r.reader_role = 'agent' AND r.reader_id = 'agent-1'
                ORDER BY t.n" >"$BENCH_OUT/raw/writes-reads.txt"
            client_before=$(children_cpu_ms)
            WRITES_READS=$BENCH_OUT/raw/writes-reads.txt WRITES_TOKEN=$token WRK_THREADS=2 \
                bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" --latency -s "$BENCH_DIR/writes_read.lua" "$base" >"$raw" 2>&1
        else
            WRITES_IDS=$list WRITES_TOKEN=$token WRITES_IDEMPOTENT=$idempotent WRITES_PATH=$path WRITES_ACTION=$action \
                bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" --latency -s "$BENCH_DIR/writes.lua" "$base" >"$raw" 2>&1
        fi
        client_after=$(children_cpu_ms)
        [ "$kind" = sb-hook ] && bench_webhook_drain
        requests=$(awk '/requests in/ { print $1 }' "$raw")
        read -r rps p50 p99 errors _ < <(bench_parse_wrk "$raw")
        p50=${p50}ms p99=${p99}ms
    fi
    [ "${requests:-0}" -gt 0 ] || bench_die "no request completed ($label): $(cat "$raw")"
    # Every write here must succeed: answers that are not 2xx would be measured as cheap writes.
    [ "${errors:-0}" -eq 0 ] || bench_die "$errors of $requests requests were not answered 2xx ($label)"
    local cpu_after
    cpu_after=$( [ "$kind" = fastapi ] && bench_tree_cpu_ms "$pid" || bench_pid_cpu_ms "$pid")
    [ "$kind" = pgbench ] && cpu_after=$(children_cpu_ms)
    local own=$(( (cpu_after - cpu_before) * 1000 / requests )) pg=$(( ($(bench_cpu_ms postgres) - pg_before) * 1000 / requests ))
    local cs="-"
    if [ "$kind" != pgbench ]; then
        cs=$(( $(bench_ctx_switches "$pid") - cs_before ))
        cs="$(( cs * 10 / requests / 10 )).$(( cs * 10 / requests % 10 ))"
    fi
    local client=$(( (client_after - client_before) * 1000 / requests ))
    # Every process's CPU for one request: the server's (pgbench's own is its client's), Postgres's and the client's.
    local all=$(( own + pg ))
    [ "$kind" = pgbench ] || all=$(( all + client ))
    RPS[$key]=$rps SB[$key]=$own PG[$key]=$pg CS[$key]=$cs CL[$key]=$client ALL[$key]=$all
    rows+=("| $label | $rps | $p50 / $p99 | ${errors:-0} | $own | $pg | $client | $all | $cs |")
    bench_log "$label: $rps/s, own CPU $own µs, Postgres $pg µs, $cs context switches per request"
}

for commit in on off; do
    psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" SET synchronous_commit = $commit"
    # Pooled connections keep the setting they started with: fresh processes take the new one.
    bench_stop_servers
    bench_start_server receiver "http://127.0.0.1:$hook_port/count" -- env PORT="$hook_port" HOST=127.0.0.1 THREADS=1 "$BENCH_C_BIN"
    start_switchboard
    [ -z "$fastapi" ] || start_fastapi
    start_c_peer
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
        at="synchronous_commit=$commit, round $r"
        measure "$at: Switchboard, plain" "$commit-$r-plain" sb
        measure "$at: Switchboard, Idempotency-Key" "$commit-$r-key" sb-key
        measure "$at: Switchboard, plain, webhook subscribed" "$commit-$r-hook" sb-hook
        measure "$at: Switchboard, read positions that move" "$commit-$r-read" sb-read
        measure "$at: Switchboard, interactions opened" "$commit-$r-create" sb-create
        measure "$at: Switchboard, claims and unassignments in turn" "$commit-$r-claim" sb-claim
        measure "$at: Switchboard, typing and not in turn" "$commit-$r-typing" sb-typing
        measure "$at: pgbench -c8, the transaction" "$commit-$r-pgbench" pgbench
        [ -z "$fastapi" ] || measure "$at: FastAPI + asyncpg, the transaction" "$commit-$r-fastapi" fastapi
        measure "$at: C (libmicrohttpd + libpq), the same statement" "$commit-$r-c" c
        plain=$commit-$r-plain
        line="| $commit | $r | $(bench_ratio "${RPS[$plain]}" "${RPS[$commit-$r-pgbench]}") | "
        line+="$( [ -n "$fastapi" ] && bench_ratio "${RPS[$plain]}" "${RPS[$commit-$r-fastapi]}" || echo -) | "
        line+="${SB[$plain]} | $(bench_ratio "${SB[$commit-$r-key]}" "${SB[$plain]}") | "
        line+="$(( SB[$commit-$r-hook] + PG[$commit-$r-hook] - SB[$plain] - PG[$plain] )) | "
        line+="${SB[$commit-$r-c]} | $(bench_ratio "${SB[$plain]}" "${SB[$commit-$r-c]}") | "
        line+="$(bench_ratio "${RPS[$commit-$r-c]}" "${RPS[$commit-$r-pgbench]}") | $(bench_ratio "${RPS[$plain]}" "${RPS[$commit-$r-c]}") |"
        summary+=("$line")
        if [ "$commit" = off ]; then
            pg_ratios+=("$(bench_ratio "${RPS[$plain]}" "${RPS[$commit-$r-pgbench]}")") cpus+=("${SB[$plain]}")
            key_ratios+=("$(bench_ratio "${SB[$commit-$r-key]}" "${SB[$plain]}")")
            hook_extras+=("$(( SB[$commit-$r-hook] + PG[$commit-$r-hook] - SB[$plain] - PG[$plain] ))")
            c_ratios+=("$(bench_ratio "${SB[$plain]}" "${SB[$commit-$r-c]}")") c_cpus+=("${SB[$commit-$r-c]}")
            c_pg_ratios+=("$(bench_ratio "${RPS[$commit-$r-c]}" "${RPS[$commit-$r-pgbench]}")")
            c_rps_ratios+=("$(bench_ratio "${RPS[$plain]}" "${RPS[$commit-$r-c]}")")
            all_sb+=("${ALL[$plain]}") all_c+=("${ALL[$commit-$r-c]}") all_pgbench+=("${ALL[$commit-$r-pgbench]}")
        fi
    done
done
# The goals, judged on the median round with synchronous_commit off (the software's cost, not the disk's).
pg_ratio=$(bench_median "${pg_ratios[@]}") cpu=$(bench_median "${cpus[@]}")
key_ratio=$(bench_median "${key_ratios[@]}") hook_extra=$(bench_median "${hook_extras[@]}")
verdicts=(
    "$(bench_verdict "message POST/s ÷ pgbench running the transaction = $pg_ratio (goal ≥ 1.0; rounds ${pg_ratios[*]})" "$pg_ratio" 1.0)"
    "$(bench_verdict "Switchboard CPU per POST = $cpu µs (goal ≤ 150; rounds ${cpus[*]})" 150 "$cpu")"
    "$(bench_verdict "CPU of a POST with an Idempotency-Key ÷ plain = $key_ratio (goal ≤ 1.3; rounds ${key_ratios[*]})" 1.3 "$key_ratio")"
    "$(bench_verdict "a webhook's extra CPU per POST, all processes = $hook_extra µs (goal ≤ 500; rounds ${hook_extras[*]})" 500 "$hook_extra")"
    "$(bench_measured "Switchboard CPU per POST ÷ C running the same statement = $(bench_median "${c_ratios[@]}") (C: $(bench_median "${c_cpus[@]}") µs; rounds ${c_ratios[*]})")"
    "$(bench_measured "the reference's own ceiling: C's POST/s ÷ pgbench = $(bench_median "${c_pg_ratios[@]}") (rounds ${c_pg_ratios[*]}); Switchboard's POST/s ÷ C's = $(bench_median "${c_rps_ratios[@]}") (rounds ${c_rps_ratios[*]})")"
    "$(bench_measured "CPU per request in all processes (server, Postgres, client), which sets the rate on cores they share: Switchboard's POST $(bench_median "${all_sb[@]}") µs, C's $(bench_median "${all_c[@]}") µs, pgbench's transaction $(bench_median "${all_pgbench[@]}") µs (rounds ${all_sb[*]}; ${all_c[*]}; ${all_pgbench[*]})")"
)
# Each write's own figures (no bound of their own beyond the POST's: for telling builds apart), medians of the rounds.
for write in "plain:message POST" "read:read position" "create:interaction opened" "claim:claim or unassignment" \
    "typing:typing"; do
    key=${write%%:*} what=${write#*:} own=() switches=()
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do own+=("${SB[off-$r-$key]}") switches+=("${CS[off-$r-$key]}"); done
    verdicts+=("$(bench_measured "$what: Switchboard CPU $(bench_median "${own[@]}") µs, context switches $(bench_median "${switches[@]}") per request (rounds ${own[*]} µs; ${switches[*]})")")
done
psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" RESET synchronous_commit" -c "DROP TABLE bench_targets"
out="$BENCH_OUT/writes.md"
{
    echo "## Message POSTs: the write path"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- \`wrk -t2 -c32 -d${BENCH_SECONDS}s --latency -s bench/writes.lua\`: an agent's messages over $INTERACTIONS interactions;"
    echo "  \`pgbench -M prepared -c8 -j2 -f bench/writes/transaction.sql\` on the same interactions"
    echo
    echo "| run | requests/s | p50 / p99 | errors | own CPU µs/request | Postgres µs/request | client µs/request | all µs/request | context switches/request |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Goals: POST/s ≥ 1.0× pgbench running the transaction (with \`synchronous_commit = off\`); Switchboard CPU ≤ 150 µs"
    echo "per POST; an Idempotency-Key within 1.3× of a plain POST. FastAPI is a reference, not a goal. A webhook's extra"
    echo "CPU is what a subscribed tenant's POST and its delivery cost Switchboard and Postgres together beyond a plain one."
    echo "C is bench/c-baseline/message.c: the POST's HTTP, token, JSON and statement in the leanest C, a reference."
    echo
    echo "| synchronous_commit | round | POST/s ÷ pgbench | POST/s ÷ FastAPI | Switchboard µs/POST | Idempotency-Key CPU ÷ plain | webhook: extra µs (all processes) | C µs/POST | Switchboard CPU ÷ C's | C POST/s ÷ pgbench | POST/s ÷ C's |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${summary[@]}"
    echo
    echo "With \`synchronous_commit = off\`, the median round:"
    echo
    printf '%s\n\n' "${verdicts[@]}"
} >"$out"
cat "$out" >&2
