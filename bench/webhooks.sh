#!/usr/bin/env bash
# Webhooks: what a subscribed endpoint costs a message POST, and how fast the outbox drains.
#   1. POST /v1/interactions/{id}/messages (16 interactions per tenant, round-robin) for a tenant without a webhook
#      endpoint and for one with an endpoint subscribed to message.created, in interleaved rounds; each round starts
#      with an empty outbox, and the "with" rounds deliver their messages while they run. Target: req/s with
#      webhooks >= 0.80 of without (BENCH_WEBHOOK_TARGET_RATIO).
#   2. Throughput: BENCH_WEBHOOK_BURST messages (100 interactions) committed at once, timed until every one is
#      delivered to a local receiver that answers 204 at once (the raw-C baseline's POST /hook, so that the
#      receiver's own cost is as small as the machine allows: it shares the two cores with everything else).
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_WEBHOOK_SERVER_ENV adds settings to the server's environment
#   (e.g. WEBHOOK_CONCURRENCY=1, to see what the deliveries running alongside cost the POSTs).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
TARGET_RATIO=${BENCH_WEBHOOK_TARGET_RATIO:-0.80}
BURST=${BENCH_WEBHOOK_BURST:-5000}
bench_need_switchboard_and_database
command -v psql >/dev/null || bench_die "psql not found"
bench_build_c_baseline
ADMIN=bench-admin-token-0123456789

sb_port="" hook_port=""
bench_pick_port sb_port 18390
bench_pick_port hook_port 18395
bench_start_server receiver "http://127.0.0.1:$hook_port/count" -- env PORT="$hook_port" HOST=127.0.0.1 THREADS=1 "$BENCH_C_BIN"
bench_start_server switchboard "http://127.0.0.1:$sb_port/readyz" -- env PORT="$sb_port" HOST=127.0.0.1 \
    STREAM_PORT=off DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    WEBHOOK_ALLOW_PRIVATE_TARGETS=1 ${BENCH_WEBHOOK_SERVER_ENV:-} "$SB_BIN"
base="http://127.0.0.1:$sb_port"
json() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
post() { curl -sf -X POST "$base$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$3"; }

# Two tenants, each with a customer and 16 open interactions; only the second has an endpoint.
declare -A TOKEN IDS TENANT
for t in without with; do
    tenant=$(post /v1/admin/tenants "$ADMIN" "{\"name\":\"bench-$t\"}")
    key=$(echo "$tenant" | json api_key)
    TENANT[$t]=$(echo "$tenant" | json id)
    TOKEN[$t]=$(post /v1/sessions "$key" '{"user_id":"bench","role":"customer"}' | json token)
    ids=""
    for _ in $(seq 1 16); do ids+="$(post /v1/interactions "${TOKEN[$t]}" '{}' | json id),"; done
    IDS[$t]=${ids%,}
    [ "$t" = with ] && post /v1/webhooks/endpoints "$key" \
        "{\"url\":\"http://127.0.0.1:$hook_port/hook\",\"events\":[\"message.created\"]}" >/dev/null
done
script="$BENCH_OUT/raw/webhooks-post.lua"
cat >"$script" <<'LUA'
local ids = {}
for id in string.gmatch(os.getenv("BENCH_INTERACTIONS"), "[^,]+") do ids[#ids + 1] = id end
local auth = "Bearer " .. os.getenv("BENCH_TOKEN")
local n = 0
request = function()
    n = n + 1
    return wrk.format("POST", "/v1/interactions/" .. ids[(n % #ids) + 1] .. "/messages",
        { ["Content-Type"] = "application/json", ["Authorization"] = auth }, '{"text":"Where is my order?"}')
end
LUA
run_posts() { # TENANT SECONDS OUT
    BENCH_INTERACTIONS=${IDS[$1]} BENCH_TOKEN=${TOKEN[$1]} bench_run wrk -t"$BENCH_WRK_THREADS" -c"$BENCH_WRK_CONNECTIONS" \
        -d"${2}s" --latency -s "$script" "$base" >"$3" 2>&1 || { cat "$3" >&2; bench_die "wrk failed"; }
}
for t in without with; do run_posts "$t" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/webhooks-$t-warmup.txt"; done
bench_webhook_drain
declare -A RPS P50 P99 NON2XX
# CPU per POST by party, over each round and the drain after it (the deliveries a "with" round leaves behind count).
PARTIES=(switchboard postgres mhd-baseline)
declare -A CPU POSTS
cpu_readings() { local p; for p in "${PARTIES[@]}"; do printf '%s ' "$(bench_cpu_ms "$p")"; done; echo; }
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for t in without with; do
        raw="$BENCH_OUT/raw/webhooks-$t-r$r.txt"
        read -r -a before < <(cpu_readings)
        run_posts "$t" "$BENCH_SECONDS" "$raw"
        read -r rps p50 p99 non2xx _ < <(bench_parse_wrk "$raw")
        RPS[$t:$r]=$rps P50[$t:$r]=$p50 P99[$t:$r]=$p99 NON2XX[$t:$r]=$non2xx
        bench_log "round $r/$BENCH_ROUNDS  $(printf '%-16s %8s req/s  p50 %s ms  p99 %s ms' "$t webhooks" "$rps" "$p50" "$p99")"
        bench_webhook_drain
        read -r -a after < <(cpu_readings)
        for i in "${!PARTIES[@]}"; do
            CPU[$t:${PARTIES[$i]}]=$(( ${CPU[$t:${PARTIES[$i]}]:-0} + ${after[$i]} - ${before[$i]} ))
        done
        POSTS[$t]=$(( ${POSTS[$t]:-0} + $(awk '/requests in/ { print $1 }' "$raw") ))
    done
done
declare -A MED MP50 MP99 ERR
bench_summarize_rounds without with

# Throughput: a burst committed in one transaction over 100 interactions, then timed until all are delivered.
psql "$DATABASE_URL" -q <<SQL
INSERT INTO interactions (tenant_id, customer_id) SELECT '${TENANT[with]}', 'burst' FROM generate_series(1, 100);
SQL
received_before=$(curl -sf "http://127.0.0.1:$hook_port/count")
start=$(date +%s.%N)
bench_event_burst "$DATABASE_URL" "$BURST"
committed=$(date +%s.%N)
bench_webhook_drain
done_at=$(date +%s.%N)
received=$(( $(curl -sf "http://127.0.0.1:$hook_port/count") - received_before ))
per_second=$(python3 -c "print(round($BURST / ($done_at - $committed)))")
bench_log "burst: $BURST messages committed in $(python3 -c "print(round($committed - $start, 2))") s, delivered in $(python3 -c "print(round($done_at - $committed, 2))") s: $per_second/s ($received received)"

ratio=$(bench_ratio "${MED[with]}" "${MED[without]}")
verdict=PASS
reason="POST rate with webhooks / without = $ratio >= $TARGET_RATIO"
if [ "${ERR[with]}" -gt 0 ] || [ "${ERR[without]}" -gt 0 ]; then
    verdict=FAIL; reason="non-2xx answers: with ${ERR[with]}, without ${ERR[without]}"
elif ! bench_ge "$ratio" "$TARGET_RATIO"; then
    verdict=FAIL; reason="POST rate with webhooks / without = $ratio < $TARGET_RATIO"
elif [ "$received" -lt "$BURST" ]; then
    verdict=FAIL; reason="the receiver got $received of $BURST burst deliveries"
fi
{
    echo
    echo "## webhooks"
    echo
    echo "Message POSTs: wrk -t$BENCH_WRK_THREADS -c$BENCH_WRK_CONNECTIONS -d${BENCH_SECONDS}s, $BENCH_ROUNDS interleaved rounds, medians; 16 interactions per tenant"
    echo '```'
    printf '%-28s %10s %9s %9s %8s\n' target "req/s" "p50 ms" "p99 ms" non-2xx
    for t in without with; do
        printf '%-28s %10s %9s %9s %8s\n' "POST message, $t webhooks" "${MED[$t]}" "${MP50[$t]}" "${MP99[$t]}" "${ERR[$t]}"
    done
    echo "ratio with/without: $ratio (target >= $TARGET_RATIO)"
    echo "delivery throughput: $per_second deliveries/s ($BURST messages over 100 interactions, receiver answers 204 at once)"
    echo '```'
    echo
    echo "CPU per message POST, by process, over all rounds and the drains after them (µs; the receiver answers the deliveries):"
    echo '```'
    printf '%-28s' ""; for p in "${PARTIES[@]}"; do printf ' %12s' "$p"; done; printf ' %12s\n' total
    for t in without with; do
        printf '%-28s' "$t webhooks"; sum=0
        for p in "${PARTIES[@]}"; do
            us=$(( CPU[$t:$p] * 1000 / POSTS[$t] )); sum=$((sum + us)); printf ' %12s' "$us"
        done
        printf ' %12s\n' "$sum"
    done
    echo '```'
    echo "$verdict: $reason. $(bench_machine); load $(bench_load)."
} | tee "$BENCH_OUT/webhooks.md"
[ "$verdict" = PASS ]
