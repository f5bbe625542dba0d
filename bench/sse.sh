#!/usr/bin/env bash
# SSE fan-out on one process: N subscribers (default 10,000) follow one interaction on the event-stream listener;
# for each published message, the time until every subscriber has it (p50/p99 over repeated publishes); the
# server's RSS per subscriber; and the API's requests/s (GET /healthz on the main listener, async path) without and
# with the subscribers attached. Targets: p99 < 250 ms, < 30 KB per subscriber, API with them >= 0.85 of without.
# All subscribers share one session and one address, so the per-user stream cap is raised above N and the
# per-address connection limit is off for this run.
#   SSE_SUBSCRIBERS (10000), SSE_PUBLISHES (30), SWITCHBOARD_BIN, DATABASE_URL
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
N=${SSE_SUBSCRIBERS:-10000}
PUBLISHES=${SSE_PUBLISHES:-30}
SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
[ -x "$SB_BIN" ] || bench_die "Switchboard binary not found at $SB_BIN (make bench builds it)"
[ -n "${DATABASE_URL:-}" ] || bench_die "DATABASE_URL is required (make bench provides one)"
CLIENT=$BENCH_DIR/sse-client/sse_fanout
[ "$CLIENT" -nt "$BENCH_DIR/sse-client/sse_fanout.c" ] && [ "$CLIENT" -nt "$BENCH_DIR/sse-client/client_common.h" ] || gcc -O2 -Wall -o "$CLIENT" "$BENCH_DIR/sse-client/sse_fanout.c"
ADMIN=bench-admin-token-0123456789

port="" stream_port=""
bench_pick_port port 18490
bench_pick_port stream_port $((port + 1))
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT="$stream_port" HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    HTTP_CONNECTION_LIMIT=30000 HTTP_CONNECTIONS_PER_ADDRESS=0 STREAMS_PER_PRINCIPAL=$((N + 100)) ${SSE_SERVER_ENV:-} "$SB_BIN"
pid=${BENCH_PIDS[-1]}
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }

json() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
base="http://127.0.0.1:$port"
api_key=$(curl -sf -X POST "$base/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' -d '{"name":"sse"}' | json api_key)
token=$(curl -sf -X POST "$base/v1/sessions" -H "Authorization: Bearer $api_key" -H 'Content-Type: application/json' -d '{"user_id":"c","role":"customer"}' | json token)
id=$(curl -sf -X POST "$base/v1/interactions" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"subject":"fan-out"}' | json id)

api_rps() { bench_wrk "$base/healthz" "$BENCH_SECONDS" "$1"; bench_parse_wrk "$1" | cut -d' ' -f1; }
bench_wrk "$base/healthz" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/sse-warmup.txt"
without=$(api_rps "$BENCH_OUT/raw/sse-api-without.txt")
rss_before=$(rss_kb)
bench_log "API without subscribers: $without req/s; RSS ${rss_before} KB; attaching $N subscribers"

out="$BENCH_OUT/raw/sse-client.txt"
"$CLIENT" 127.0.0.1 "$stream_port" "$port" "$id" "$token" "$N" "$PUBLISHES" $((BENCH_SECONDS * 2 + 4)) >"$out" 2>&1 &
client=$!
for _ in $(seq 1 600); do grep -q '^READY' "$out" && break; kill -0 $client 2>/dev/null || break; sleep 0.1; done
grep -q "^READY $N\$" "$out" || { cat "$out" >&2; bench_die "subscribers did not all attach"; }
sleep 1
rss_with=$(rss_kb)
with=$(api_rps "$BENCH_OUT/raw/sse-api-with.txt")
bench_log "API with $N subscribers: $with req/s; RSS ${rss_with} KB"
wait $client || { cat "$out" >&2; bench_die "the fan-out client failed"; }
read -r _ p50 p99 max complete < <(grep '^RESULT' "$out")
per_sub=$(( (rss_with - rss_before) / N ))
ratio=$(bench_ratio "$with" "$without")
verdict=PASS
reasons=()
bench_ge 250 "$p99" || { verdict=FAIL; reasons+=("p99 $p99 ms >= 250"); }
[ "$per_sub" -lt 30 ] || { verdict=FAIL; reasons+=("$per_sub KB per subscriber >= 30"); }
bench_ge "$ratio" 0.85 || { verdict=FAIL; reasons+=("API ratio $ratio < 0.85"); }
[ "$complete" = "$PUBLISHES/$PUBLISHES" ] || { verdict=FAIL; reasons+=("only $complete publishes reached everyone"); }
{
    echo
    echo "SSE fan-out: $N subscribers on one process, $PUBLISHES publishes"
    echo "time until every subscriber has the event: p50 $p50 ms, p99 $p99 ms, max $max ms (complete: $complete)"
    echo "RSS: $rss_before KB before, $rss_with KB with subscribers: $per_sub KB per subscriber"
    echo "API GET /healthz: $without req/s without, $with req/s with subscribers: ratio $ratio"
    echo "$verdict${reasons[*]:+: ${reasons[*]}}"
} | tee "$BENCH_OUT/sse.txt"
{
    echo "## SSE fan-out"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; machine: $(bench_machine)"
    echo "- $N subscribers on the event-stream listener; $PUBLISHES messages published one after another through the API"
    echo
    echo "| measure | value | target |"
    echo "| --- | ---: | --- |"
    echo "| time until all have the event, p50 | $p50 ms | |"
    echo "| time until all have the event, p99 | $p99 ms | < 250 ms |"
    echo "| RSS per subscriber | $per_sub KB | < 30 KB |"
    echo "| API req/s without / with subscribers | $without / $with ($ratio) | >= 0.85 |"
    echo
    echo "**$verdict**${reasons[*]:+: ${reasons[*]}}"
} >"$BENCH_OUT/sse.md"
