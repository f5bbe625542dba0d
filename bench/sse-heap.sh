#!/usr/bin/env bash
# Where an event stream's memory goes: the server runs under heaptrack while N subscribers (default 2,000) hold
# their streams on the event-stream listener; then it is stopped and heaptrack's peak is split by allocation site.
# RSS per subscriber (bench/sse.sh) moves by ±1.5 KB between runs on a shared machine; heap bytes per stream at the
# peak do not, so this is the figure to compare two builds by.
#   SSE_HEAP_SUBSCRIBERS (2000), SWITCHBOARD_BIN, DATABASE_URL
# Prints: heap bytes per subscriber at the peak, allocations per subscriber, and the top allocation sites.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
command -v heaptrack >/dev/null || bench_die "heaptrack not found (apt-get install -y heaptrack)"
N=${SSE_HEAP_SUBSCRIBERS:-2000}
bench_need_switchboard_and_database
CLIENT=$BENCH_DIR/sse-client/sse_fanout
[ "$CLIENT" -nt "$BENCH_DIR/sse-client/sse_fanout.c" ] || gcc -O2 -Wall -o "$CLIENT" "$BENCH_DIR/sse-client/sse_fanout.c"
ADMIN=bench-admin-token-0123456789
# The label names the tree a binary was built in (…/TREE/.build/release/switchboard), else the binary itself.
case "$SB_BIN" in
    */.build/*) label=$(basename "${SB_BIN%%/.build/*}") ;;
    *) label=$(basename "$SB_BIN") ;;
esac
label=${SSE_HEAP_LABEL:-$label}

run_once() { # run_once SUBSCRIBERS OUTPUT_PREFIX -> heaptrack data file path on stdout
    local subs=$1 prefix=$2 port="" stream_port="" pid hpid
    bench_pick_port port 18590
    bench_pick_port stream_port $((port + 1))
    rm -f "$prefix".*
    env PORT="$port" STREAM_PORT="$stream_port" HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error \
        RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN HTTP_CONNECTION_LIMIT=30000 \
        HTTP_CONNECTIONS_PER_ADDRESS=0 STREAMS_PER_PRINCIPAL=$((subs + 100)) \
        heaptrack -o "$prefix" "$SB_BIN" >"$BENCH_OUT/logs/sse-heap-$subs.log" 2>&1 &
    hpid=$!
    local base="http://127.0.0.1:$port"
    for _ in $(seq 1 300); do curl -sf "$base/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -sf "$base/readyz" >/dev/null || { tail "$BENCH_OUT/logs/sse-heap-$subs.log" >&2; bench_die "server not ready"; }
    pid=$(pgrep -f -n "^$SB_BIN\$" || pgrep -n -x switchboard)
    local token id
    read -r token id < <(bench_customer_interaction "$base" "$ADMIN" heap)
    if [ "$subs" -gt 0 ]; then
        local out="$BENCH_OUT/raw/sse-heap-client-$subs.txt"
        "$CLIENT" 127.0.0.1 "$stream_port" "$port" "$id" "$token" "$subs" 0 4 >"$out" 2>&1 &
        local client=$!
        for _ in $(seq 1 1200); do grep -q '^READY' "$out" && break; kill -0 $client 2>/dev/null || break; sleep 0.1; done
        grep -qE "^READY $subs( |$)" "$out" || { cat "$out" >&2; kill $client 2>/dev/null; bench_die "subscribers did not all attach"; }
        sleep 2
        kill -KILL "$pid"
        wait $client 2>/dev/null || true
    else
        sleep 2
        kill -KILL "$pid"
    fi
    wait $hpid || true
    ls "$prefix".* | head -1
}

summary() { heaptrack_print -f "$1" --print-peaks 0 --print-allocators 0 --print-temporary 0 --print-leaks 0 2>/dev/null; }
# The server is killed while the streams are held, so what heaptrack reports as "leaked" is what was in use then.
held_bytes() { summary "$1" | awk '/^total memory leaked:/ {print $4}'; }
peak_bytes() { summary "$1" | awk '/^peak heap memory consumption:/ {print $5}'; }
calls() { summary "$1" | awk '/^calls to allocation functions:/ {print $5}'; }
to_bytes() { python3 -c "import sys; s=sys.argv[1]; u={'B':1,'K':1e3,'M':1e6,'G':1e9}; print(int(float(s[:-1])*u[s[-1]]) if s[-1] in u else int(float(s)))" "$1"; }

base_file=$(run_once 0 "$BENCH_OUT/raw/sse-heap-$label-0")
with_file=$(run_once "$N" "$BENCH_OUT/raw/sse-heap-$label-$N")
h0=$(to_bytes "$(held_bytes "$base_file")"); hn=$(to_bytes "$(held_bytes "$with_file")")
p0=$(to_bytes "$(peak_bytes "$base_file")"); pn=$(to_bytes "$(peak_bytes "$with_file")")
c0=$(calls "$base_file"); cn=$(calls "$with_file")
{
    echo
    echo "SSE heap ($label): $N subscribers held"
    echo "heap in use while held: $h0 B idle, $hn B with subscribers: $(( (hn - h0) / N )) B per subscriber"
    echo "heap peak (the attach storm): $p0 B idle, $pn B with subscribers: $(( (pn - p0) / N )) B per subscriber"
    echo "allocation calls: $c0 idle, $cn with subscribers: $(( (cn - c0) / N )) per subscriber attached"
    echo "in use while held, by allocation site (bytes, allocations):"
    heaptrack_print -f "$with_file" --print-peaks 0 --print-allocators 0 --print-temporary 0 --print-leaks 1 \
        -n 15 -s 0 2>/dev/null | awk '/^MEMORY LEAKS/ {on=1; next} on && /^[0-9.]+[KMG]?B? leaked over/ {b=$1; c=$4; getline; print "  " b, c, $1}' | head -15
} | tee "$BENCH_OUT/sse-heap-$label.txt"
