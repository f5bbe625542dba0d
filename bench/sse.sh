#!/usr/bin/env bash
# SSE fan-out on one process: N subscribers (default 10,000) follow one interaction on the event-stream listener;
# for each published message, the time until every subscriber has it (p50/p99 over repeated publishes); the
# server's RSS per subscriber; and the API's requests/s (GET /healthz on the main listener, async path) without and
# with the subscribers attached; then again with the subscribers asking on the main port, which hands them to the
# streams' daemon (SSE_SAME_PORT=0 skips this). Targets: p99 <= 100 ms and <= nchan's, <= 14 KB per subscriber, API with them >= 0.85
# of without, on either port.
# All subscribers share one session and one address, so the per-user stream cap is raised above N and the
# per-address connection limit is off for this run.
# The reference in the same run: nginx with the nchan module (one worker), the same client subscribing to a channel
# and publishing to it: time to attach everyone, fan-out p50/p99, the worker's RSS per subscriber, and nginx's own
# request rate beside its subscribers. SSE_NCHAN=0 skips it (it installs nginx and libnginx-mod-nchan from Debian).
# And the floor of libmicrohttpd itself, measured the same way: bench/c-baseline/sse.c, the leanest C that suspends and
# resumes each stream as Switchboard's event-stream daemon does, with no database and no tasks. SSE_C=0 skips it.
#   SSE_SUBSCRIBERS (10000), SSE_PUBLISHES (30), SWITCHBOARD_BIN, DATABASE_URL; SSE_SERVER_ENV (extra environment for
#   Switchboard, e.g. SSE_HEARTBEAT_SECONDS=3); FANOUT_EACH=1 makes the client print every publish's times
#   (PUBLISH k <ms until all had it> <how many> answered <ms until the POST's answer> first <ms until the first had
#   it>) into bench/out/raw/sse-client*.txt
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
N=${SSE_SUBSCRIBERS:-10000}
PUBLISHES=${SSE_PUBLISHES:-30}
bench_need_switchboard_and_database
bench_build_client sse_fanout
CLIENT=$BENCH_CLIENT
ADMIN=bench-admin-token-0123456789

port="" stream_port=""
bench_pick_port port 18490
bench_pick_port stream_port $((port + 1))
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT="$stream_port" HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    HTTP_CONNECTION_LIMIT=30000 HTTP_CONNECTIONS_PER_ADDRESS=0 STREAMS_PER_PRINCIPAL=$((N + 100)) ${SSE_SERVER_ENV:-} "$SB_BIN"
pid=${BENCH_PIDS[-1]}
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }

base="http://127.0.0.1:$port"
read -r token id < <(bench_customer_interaction "$base" "$ADMIN" sse)

api_rps() { bench_wrk "$base/healthz" "$BENCH_SECONDS" "$1"; bench_parse_wrk "$1" | cut -d' ' -f1; }
bench_wrk "$base/healthz" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/sse-warmup.txt"
without=$(api_rps "$BENCH_OUT/raw/sse-api-without.txt")
rss_before=$(rss_kb)
bench_log "API without subscribers: $without req/s; RSS ${rss_before} KB; attaching $N subscribers"

out="$BENCH_OUT/raw/sse-client.txt"
"$CLIENT" 127.0.0.1 "$stream_port" "$port" "$id" "$token" "$N" "$PUBLISHES" $((BENCH_SECONDS * 2 + 4)) >"$out" 2>&1 &
client=$!
for _ in $(seq 1 600); do grep -q '^READY' "$out" && break; kill -0 $client 2>/dev/null || break; sleep 0.1; done
grep -q "^READY $N " "$out" || { cat "$out" >&2; bench_die "subscribers did not all attach"; }
attach_ms=$(awk '/^READY/ { print $3 }' "$out")
sleep 1
rss_with=$(rss_kb)
with=$(api_rps "$BENCH_OUT/raw/sse-api-with.txt")
bench_log "API with $N subscribers: $with req/s; RSS ${rss_with} KB"
wait $client || { cat "$out" >&2; bench_die "the fan-out client failed"; }
read -r _ p50 p99 max complete < <(grep '^RESULT' "$out")
per_sub=$(awk -v a="$rss_with" -v b="$rss_before" -v n="$N" 'BEGIN { printf "%.1f", (a - b) / n }')
ratio=$(bench_ratio "$with" "$without")

# One port: the same subscribers ask for their streams on the main port, as a deployment exposing one port does.
# The main port hands them to the streams' own daemon; API requests on that port are measured beside them.
same=n/a same_ratio=n/a same_attach_ms=n/a
if [ "${SSE_SAME_PORT:-1}" != 0 ]; then
    sleep 2
    sout="$BENCH_OUT/raw/sse-client-same-port.txt"
    "$CLIENT" 127.0.0.1 "$port" "$port" "$id" "$token" "$N" 1 $((BENCH_SECONDS + 4)) >"$sout" 2>&1 &
    sclient=$!
    for _ in $(seq 1 600); do grep -q '^READY' "$sout" && break; kill -0 $sclient 2>/dev/null || break; sleep 0.1; done
    grep -q "^READY $N " "$sout" || { cat "$sout" >&2; bench_die "subscribers did not all attach on the main port"; }
    same_attach_ms=$(awk '/^READY/ { print $3 }' "$sout")
    sleep 1
    same=$(api_rps "$BENCH_OUT/raw/sse-api-same-port.txt")
    same_ratio=$(bench_ratio "$same" "$without")
    bench_log "API with $N subscribers on the same port: $same req/s"
    wait $sclient || { cat "$sout" >&2; bench_die "the same-port client failed"; }
fi
bench_stop_servers

# reference_run NAME PORT PID: the same client against a hub with nchan's paths (GET /sub/ID, POST /pub/ID,
# GET /healthz) listening on PORT, whose serving process is PID; sets ref_attach, ref_p50, ref_p99, ref_complete,
# ref_per_sub and ref_ratio (its own /healthz rate with / without subscribers), each n/a when the run failed.
reference_run() {
    local name=$1 rport=$2 rpid=$3 rbase="http://127.0.0.1:$2" rout="$BENCH_OUT/raw/sse-$1-client.txt"
    local rwithout rwith rbefore rwith_rss rclient
    ref_attach=n/a ref_p50=n/a ref_p99=n/a ref_per_sub=n/a ref_ratio=n/a ref_complete=n/a
    rss_of() { awk '/VmRSS/ {print $2}' "/proc/$rpid/status"; }
    bench_wrk "$rbase/healthz" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/sse-$name-warmup.txt"
    bench_wrk "$rbase/healthz" "$BENCH_SECONDS" "$BENCH_OUT/raw/sse-$name-api-without.txt"
    rwithout=$(bench_parse_wrk "$BENCH_OUT/raw/sse-$name-api-without.txt" | cut -d' ' -f1)
    rbefore=$(rss_of)
    FANOUT_NCHAN=1 "$CLIENT" 127.0.0.1 "$rport" "$rport" fanout - "$N" "$PUBLISHES" $((BENCH_SECONDS * 2 + 4)) >"$rout" 2>&1 &
    rclient=$!
    for _ in $(seq 1 600); do grep -q '^READY' "$rout" && break; kill -0 $rclient 2>/dev/null || break; sleep 0.1; done
    if ! grep -q "^READY $N " "$rout"; then
        cat "$rout" >&2; bench_log "note: $name's subscribers did not all attach; its rows are n/a"
        kill $rclient 2>/dev/null || true
        return 0
    fi
    sleep 1
    rwith_rss=$(rss_of)
    bench_wrk "$rbase/healthz" "$BENCH_SECONDS" "$BENCH_OUT/raw/sse-$name-api-with.txt"
    rwith=$(bench_parse_wrk "$BENCH_OUT/raw/sse-$name-api-with.txt" | cut -d' ' -f1)
    if ! wait $rclient; then
        cat "$rout" >&2; bench_log "note: $name's client failed; its rows are n/a"
        return 0
    fi
    ref_attach=$(awk '/^READY/ { print $3 }' "$rout")
    read -r _ ref_p50 ref_p99 _ ref_complete < <(grep '^RESULT' "$rout")
    ref_per_sub=$(awk -v a="$rwith_rss" -v b="$rbefore" -v n="$N" 'BEGIN { printf "%.1f", (a - b) / n }')
    ref_ratio=$(bench_ratio "$rwith" "$rwithout")
}

# The reference: nginx + nchan, one worker, the same client.
nchan="" n_attach=n/a n_p50=n/a n_p99=n/a n_per_sub=n/a n_ratio=n/a n_complete=n/a
if [ "${SSE_NCHAN:-1}" != 0 ] && scripts/ensure-deps.sh nginx libnginx-mod-nchan \
        && module=$(ls /usr/lib/nginx/modules/ngx_nchan_module.so 2>/dev/null); then
    nchan_port=""
    bench_pick_port nchan_port 18495
    dir="$BENCH_OUT/nchan"
    mkdir -p "$dir/logs"
    cat >"$dir/nginx.conf" <<NGINX
load_module $module;
worker_processes 1;
worker_rlimit_nofile 65536;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 32768; use epoll; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    server {
        listen 127.0.0.1:$nchan_port backlog=4096;
        location = /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
        location ~ ^/sub/(\\w+)\$ { nchan_subscriber eventsource; nchan_channel_id \$1; }
        location ~ ^/pub/(\\w+)\$ { nchan_publisher; nchan_channel_id \$1; }
    }
}
NGINX
    bench_start_server nchan "http://127.0.0.1:$nchan_port/healthz" -- nginx -p "$dir" -c "$dir/nginx.conf"
    worker=$(pgrep -P "${BENCH_PIDS[-1]}" | head -n 1)
    reference_run nchan "$nchan_port" "$worker"
    n_attach=$ref_attach n_p50=$ref_p50 n_p99=$ref_p99 n_per_sub=$ref_per_sub n_ratio=$ref_ratio n_complete=$ref_complete
    [ "$n_p99" = n/a ] || nchan=yes
    bench_stop_servers
else
    bench_log "note: the nchan reference is skipped (SSE_NCHAN=0, or nginx with nchan could not be installed)"
fi

# The floor of libmicrohttpd itself: the leanest C that suspends and resumes each stream as Switchboard's event-stream
# daemon does (bench/c-baseline/sse.c: no database, no tasks), the same client. SSE_C=0 skips it.
c_attach=n/a c_p50=n/a c_p99=n/a c_per_sub=n/a c_ratio=n/a c_complete=n/a
if [ "${SSE_C:-1}" != 0 ]; then
    bench_build_c "$BENCH_SSE_BIN" "the C event-stream baseline" "$BENCH_DIR/c-baseline/sse.c" "process.h" -lmicrohttpd -lpthread
    c_port=""
    bench_pick_port c_port 18497
    bench_start_server mhd-sse "http://127.0.0.1:$c_port/healthz" -- env PORT="$c_port" HOST=127.0.0.1 "$BENCH_SSE_BIN"
    reference_run mhd-sse "$c_port" "${BENCH_PIDS[-1]}"
    c_attach=$ref_attach c_p50=$ref_p50 c_p99=$ref_p99 c_per_sub=$ref_per_sub c_ratio=$ref_ratio c_complete=$ref_complete
    bench_stop_servers
fi
# This run's figures against nchan's, for bench/fanout.sh (which judges goal 4 over several runs).
echo "$p99 $n_p99 $attach_ms $n_attach $c_p99 $c_attach" >"$BENCH_OUT/raw/sse-figures.txt"
verdict=PASS
reasons=()
bench_ge 100 "$p99" || { verdict=FAIL; reasons+=("p99 $p99 ms > 100"); }
[ "$n_p99" = n/a ] || bench_ge "$n_p99" "$p99" || { verdict=FAIL; reasons+=("p99 $p99 ms > nchan's $n_p99"); }
bench_ge 14 "$per_sub" || { verdict=FAIL; reasons+=("$per_sub KB per subscriber > 14"); }
bench_ge "$ratio" 0.85 || { verdict=FAIL; reasons+=("API ratio $ratio < 0.85"); }
[ "$same_ratio" = n/a ] || bench_ge "$same_ratio" 0.85 || { verdict=FAIL; reasons+=("same-port API ratio $same_ratio < 0.85"); }
[ "$complete" = "$PUBLISHES/$PUBLISHES" ] || { verdict=FAIL; reasons+=("only $complete publishes reached everyone"); }
{
    echo
    echo "SSE fan-out: $N subscribers on one process, $PUBLISHES publishes"
    echo "time until every subscriber has the event: p50 $p50 ms, p99 $p99 ms, max $max ms (complete: $complete)"
    echo "RSS: $rss_before KB before, $rss_with KB with subscribers: $per_sub KB per subscriber"
    echo "API GET /healthz: $without req/s without, $with req/s with subscribers: ratio $ratio"
    echo "API GET /healthz with the $N subscribers on the same port (attached in $same_attach_ms ms): $same req/s: ratio $same_ratio"
    echo "all $N attached in $attach_ms ms"
    echo "nchan (one worker), same client: attached in $n_attach ms; p50 $n_p50 ms, p99 $n_p99 ms (complete: $n_complete);" \
         "$n_per_sub KB per subscriber; its own requests with / without subscribers: $n_ratio"
    echo "C on libmicrohttpd, suspending and resuming as Switchboard does (bench/c-baseline/sse.c), same client:" \
         "attached in $c_attach ms; p50 $c_p50 ms, p99 $c_p99 ms (complete: $c_complete); $c_per_sub KB per subscriber"
    echo "$verdict${reasons[*]:+: ${reasons[*]}}"
} | tee "$BENCH_OUT/sse.txt"
{
    echo "## SSE fan-out"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; machine: $(bench_machine)"
    echo "- $N subscribers on the event-stream listener; $PUBLISHES messages published one after another through the API"
    echo
    echo "| measure | Switchboard | nchan (1 worker), same run | C on libmicrohttpd, same run | target |"
    echo "| --- | ---: | ---: | ---: | --- |"
    echo "| time to attach all $N | $attach_ms ms | $n_attach ms | $c_attach ms | |"
    echo "| time until all have the event, p50 | $p50 ms | $n_p50 ms | $c_p50 ms | |"
    echo "| time until all have the event, p99 | $p99 ms | $n_p99 ms | $c_p99 ms | <= 100 ms, and <= nchan |"
    echo "| RSS per subscriber | $per_sub KB | $n_per_sub KB | $c_per_sub KB | <= 14 KB |"
    echo "| API req/s with / without subscribers | $ratio ($with / $without) | $n_ratio | $c_ratio | >= 0.85 |"
    echo "| API req/s with / without subscribers, both on the main port | $same_ratio ($same / $without) | $n_ratio | | >= 0.85 |"
    echo
    echo "**$verdict**${reasons[*]:+: ${reasons[*]}}"
} >"$BENCH_OUT/sse.md"
