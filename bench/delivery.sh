#!/usr/bin/env bash
# Webhook delivery alone: what one delivery costs every process, measured on a burst the outbox drains.
#   Each round commits BENCH_DELIVERY_BURST message events (100 interactions, one transaction, as bench/webhooks.sh's
#   burst) for a tenant with an endpoint subscribed to message.created, at a local receiver that answers 204 at once
#   (the raw-C baseline's POST /hook). CPU is read right after the commit and again once nothing is pending, so it is
#   what delivering cost: the claims, the POSTs, the records, what Postgres spent on them, and a VACUUM of the outbox
#   after the drain (the cleaning of the rows the deliveries left; autovacuum is off for the tables the rounds write).
#   With SWITCHBOARD_BASELINE_BIN set, a second Switchboard (an older build, say) runs beside it on a database of its
#   own, and the rounds alternate between the two, so both are measured under the same load of the machine.
# Goals: Switchboard + Postgres ≤ 500 µs per delivery; Switchboard's own share ≤ 150 µs (judged on the median round).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
BURST=${BENCH_DELIVERY_BURST:-5000}
bench_need_switchboard_and_database
command -v psql >/dev/null || bench_die "psql not found"
bench_build_c_baseline
ADMIN=bench-admin-token-0123456789

# database_url NAME: DATABASE_URL naming database NAME instead (a key=value string, or a URI without parameters).
database_url() {
    case $DATABASE_URL in
        postgres://* | postgresql://*) echo "${DATABASE_URL%/*}/$1" ;;
        *) echo "$DATABASE_URL dbname=$1" ;;
    esac
}
field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }

hook_port=""
bench_pick_port hook_port 18495
bench_start_server receiver "http://127.0.0.1:$hook_port/count" -- env PORT="$hook_port" HOST=127.0.0.1 THREADS=1 "$BENCH_C_BIN"

LABELS=(switchboard)
declare -A BIN=([switchboard]=$SB_BIN) PID URL TENANT
if [ -n "${SWITCHBOARD_BASELINE_BIN:-}" ]; then
    [ -x "$SWITCHBOARD_BASELINE_BIN" ] || bench_die "no executable at SWITCHBOARD_BASELINE_BIN=$SWITCHBOARD_BASELINE_BIN"
    LABELS+=(baseline)
    BIN[baseline]=$SWITCHBOARD_BASELINE_BIN
fi
port=18480
for label in "${LABELS[@]}"; do
    database=bench_delivery_$label
    psql "$DATABASE_URL" -q -c "DROP DATABASE IF EXISTS $database" -c "CREATE DATABASE $database"
    URL[$label]=$(database_url "$database")
    sb_port=""
    bench_pick_port sb_port "$port"
    port=$((sb_port + 5))
    bench_start_server "$label" "http://127.0.0.1:$sb_port/readyz" -- env PORT="$sb_port" HOST=127.0.0.1 \
        STREAM_PORT=off DATABASE_URL="${URL[$label]}" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 \
        SWITCHBOARD_ADMIN_TOKEN=$ADMIN WEBHOOK_ALLOW_PRIVATE_TARGETS=1 "${BIN[$label]}"
    PID[$label]=${BENCH_PIDS[-1]}
    base="http://127.0.0.1:$sb_port"
    tenant=$(curl -sf -X POST "$base/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" \
        -H 'Content-Type: application/json' -d '{"name":"Deliveries"}')
    TENANT[$label]=$(echo "$tenant" | field id)
    curl -sf -X POST "$base/v1/webhooks/endpoints" -H "Authorization: Bearer $(echo "$tenant" | field api_key)" \
        -H 'Content-Type: application/json' \
        -d "{\"url\":\"http://127.0.0.1:$hook_port/hook\",\"events\":[\"message.created\"]}" >/dev/null
    psql "${URL[$label]}" -q -c "INSERT INTO interactions (tenant_id, customer_id)
        SELECT '${TENANT[$label]}', 'burst' FROM generate_series(1, 100)"
    # Vacuuming is done by the rounds themselves (below), so that an autovacuum started at some moment does not land
    # its cost on whichever round runs then.
    psql "${URL[$label]}" -q -c "ALTER TABLE webhook_messages SET (autovacuum_enabled = off)" \
        -c "ALTER TABLE webhook_attempts SET (autovacuum_enabled = off)" \
        -c "ALTER TABLE interactions SET (autovacuum_enabled = off)" \
        -c "ALTER TABLE interaction_events SET (autovacuum_enabled = off)"
done

burst() { bench_event_burst "${URL[$1]}" "$BURST"; } # LABEL: commits BURST message events in LABEL's database
drain() { bench_webhook_drain "${URL[$1]}"; }          # LABEL: waits until nothing is pending there

# A first burst each, not measured: the caches, the plans and the delivery threads warm up.
for label in "${LABELS[@]}"; do
    burst "$label"
    drain "$label"
    psql "${URL[$label]}" -q -c "VACUUM ANALYZE webhook_messages, webhook_attempts, interactions, interaction_events"
done
declare -A OWN PG RATE ROUNDS_OWN ROUNDS_TOTAL
rows=()
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for label in "${LABELS[@]}"; do
        burst "$label"
        own_before=$(bench_pid_cpu_ms "${PID[$label]}") pg_before=$(bench_cpu_ms postgres) start=$(date +%s%N)
        drain "$label"
        elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
        # The dead rows the deliveries left are theirs to clean: counted. The burst's own are not.
        psql "${URL[$label]}" -q -c "VACUUM webhook_messages, webhook_attempts"
        own=$(( ($(bench_pid_cpu_ms "${PID[$label]}") - own_before) * 1000 / BURST ))
        pg=$(( ($(bench_cpu_ms postgres) - pg_before) * 1000 / BURST ))
        rate=$(( BURST * 1000 / (elapsed_ms > 0 ? elapsed_ms : 1) ))
        ROUNDS_OWN[$label]+="$own " ROUNDS_TOTAL[$label]+="$((own + pg)) "
        psql "${URL[$label]}" -q -c "VACUUM ANALYZE interactions, interaction_events"
        rows+=("| $r | $label | $rate | $own | $pg | $((own + pg)) |")
        bench_log "round $r, $label: $rate deliveries/s, µs per delivery: Switchboard $own, Postgres $pg"
    done
done
# The floor under Switchboard's share: a C client doing nothing but the POSTs, one at a time, to the same receiver.
CURL_POST=$BENCH_DIR/c-baseline/curl_post
gcc -O2 -Wall -Werror -o "$CURL_POST" "$BENCH_DIR/c-baseline/curl_post.c" -lcurl || bench_die "curl_post failed to build"
floor=$("$CURL_POST" "http://127.0.0.1:$hook_port/hook" "$BURST")
bench_log "C floor: $floor µs of CPU per POST (libcurl alone)"
# shellcheck disable=SC2086 # the rounds are words
own=$(bench_median ${ROUNDS_OWN[switchboard]}) total=$(bench_median ${ROUNDS_TOTAL[switchboard]})
verdicts=(
    "$(bench_verdict "CPU per webhook delivery, Switchboard + Postgres = $total µs (goal ≤ 500; rounds ${ROUNDS_TOTAL[switchboard]% })" 500 "$total")"
    "$(bench_verdict "Switchboard's CPU per webhook delivery = $own µs (goal ≤ 150; rounds ${ROUNDS_OWN[switchboard]% })" 150 "$own")"
)
{
    echo
    echo "## Webhook delivery alone"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- each round: $BURST message events committed at once over 100 interactions, CPU from the commit until none is"
    echo "  pending and the outbox is vacuumed; the receiver answers 204 at once (its CPU is not counted)"
    [ -n "${SWITCHBOARD_BASELINE_BIN:-}" ] && echo "- baseline: \`$SWITCHBOARD_BASELINE_BIN\`, on a database of its own, rounds alternating"
    echo "- the floor under Switchboard's share: a C client POSTing the same way with libcurl alone, one POST at a time"
    echo "  (\`bench/c-baseline/curl_post.c\`), spends $floor µs of CPU per POST"
    echo
    echo "| round | server | deliveries/s | Switchboard µs/delivery | Postgres µs/delivery | total |"
    echo "| ---: | --- | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
    if [ -n "${SWITCHBOARD_BASELINE_BIN:-}" ]; then
        # shellcheck disable=SC2086
        echo
        echo "Median total per delivery: this build $total µs, the baseline $(bench_median ${ROUNDS_TOTAL[baseline]}) µs."
    fi
    echo
    printf '%s\n' "${verdicts[@]}"
} | tee "$BENCH_OUT/delivery.md"
bench_stop_servers
for label in "${LABELS[@]}"; do psql "$DATABASE_URL" -q -c "DROP DATABASE IF EXISTS bench_delivery_$label" || true; done
