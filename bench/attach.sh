#!/usr/bin/env bash
# Attaching SSE subscribers, counted: what each new stream of one interaction costs the server, beside the C baseline
# on libmicrohttpd (bench/c-baseline/sse.c: the same daemon settings, suspends and resumes each stream the same way,
# with no database and no tasks) attaching the same client. Each round starts both servers afresh (an attach on a
# new process also pays for its memory arenas' first growth, as bench/fanout.sh's runs do), warms each with a second
# of /healthz, then attaches ATTACH_SUBSCRIBERS subscribers (10,000) with bench/sse-client's fan-out client and reads,
# from /proc, over the attach alone: the server's CPU (user + system), its threads' context switches and its minor
# page faults. Goal 4 asks for attach time within 1.5× nchan's (bench/fanout.sh judges it); this one tells where
# Switchboard's attach stands against the same library doing the least a stream needs.
#   ATTACH_SUBSCRIBERS (10000), ATTACH_ROUNDS (3), SWITCHBOARD_BIN, DATABASE_URL
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
N=${ATTACH_SUBSCRIBERS:-10000}
ROUNDS=${ATTACH_ROUNDS:-3}
bench_need_switchboard_and_database
bench_build_client sse_fanout
CLIENT=$BENCH_CLIENT
bench_build_c "$BENCH_SSE_BIN" "the C event-stream baseline" "$BENCH_DIR/c-baseline/sse.c" "process.h" -lmicrohttpd -lpthread
ADMIN=bench-admin-token-0123456789
port="" c_port=""
bench_pick_port port 18690
bench_pick_port c_port 18697

# minor_faults PID: the process's minor page faults so far.
minor_faults() { awk '{ line = $0; sub(/^.*\) /, "", line); split(line, f, " "); print f[8] }' "/proc/$1/stat"; }

# attach LABEL PID CLIENT-ARGS...: attaches N subscribers with the client and prints "ms cpu_us switches faults" per
# subscriber (ms: the client's time to attach them all).
attach() {
    local label=$1 pid=$2 out="$BENCH_OUT/raw/attach-$1.txt"
    shift 2
    local cpu0 cs0 pf0 cpu1 cs1 pf1 client
    cpu0=$(bench_pid_cpu_ms "$pid") cs0=$(bench_ctx_switches "$pid") pf0=$(minor_faults "$pid")
    "$CLIENT" "$@" >"$out" 2>&1 &
    client=$!
    for _ in $(seq 1 1200); do grep -q '^READY' "$out" && break; kill -0 $client 2>/dev/null || break; sleep 0.05; done
    cpu1=$(bench_pid_cpu_ms "$pid") cs1=$(bench_ctx_switches "$pid") pf1=$(minor_faults "$pid")
    grep -q "^READY $N " "$out" || { cat "$out" >&2; bench_die "$label: the subscribers did not all attach"; }
    kill $client 2>/dev/null || true
    wait $client 2>/dev/null || true
    echo "$(awk '/^READY/ { print $3 }' "$out") $(( (cpu1 - cpu0) * 1000 / N )) $(( (cs1 - cs0) * 100 / N )) $(( (pf1 - pf0) * 100 / N ))"
}

# hundredths N: N / 100 with two decimals.
hundredths() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }

rows=() sb_cpu=() c_cpu=() ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
    bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=$((port + 1)) \
        HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
        HTTP_CONNECTION_LIMIT=30000 HTTP_CONNECTIONS_PER_ADDRESS=0 STREAMS_PER_PRINCIPAL=$((N + 100)) "$SB_BIN"
    sb=${BENCH_PIDS[-1]} base="http://127.0.0.1:$port"
    read -r token id < <(bench_customer_interaction "$base" "$ADMIN" attach)
    bench_wrk "$base/healthz" 1 "$BENCH_OUT/raw/attach-warmup.txt"
    read -r ms cpu cs pf < <(attach switchboard "$sb" 127.0.0.1 $((port + 1)) "$port" "$id" "$token" "$N" 1 3)
    bench_stop_servers
    bench_start_server mhd-sse "http://127.0.0.1:$c_port/healthz" -- env PORT="$c_port" HOST=127.0.0.1 "$BENCH_SSE_BIN"
    bench_wrk "http://127.0.0.1:$c_port/healthz" 1 "$BENCH_OUT/raw/attach-c-warmup.txt"
    read -r c_ms c_cpu_one c_cs c_pf < <(FANOUT_NCHAN=1 attach c "${BENCH_PIDS[-1]}" 127.0.0.1 "$c_port" "$c_port" fanout - "$N" 1 3)
    bench_stop_servers
    ratio=$(bench_ratio "$cpu" "$c_cpu_one")
    sb_cpu+=("$cpu") c_cpu+=("$c_cpu_one") ratios+=("$ratio")
    rows+=("| $r | $ms ms | $cpu µs | $(hundredths "$cs") | $(hundredths "$pf") | $c_ms ms | $c_cpu_one µs | $(hundredths "$c_cs") | $(hundredths "$c_pf") | $ratio |")
    bench_log "round $r: Switchboard attached $N in $ms ms, $cpu µs a stream; C in $c_ms ms, $c_cpu_one µs"
done

out="$BENCH_OUT/attach.md"
{
    echo "## Attaching $N SSE subscribers: Switchboard beside C on libmicrohttpd"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- each round: both servers started afresh; per subscriber, over the attach alone: the server's CPU, its threads'"
    echo "  context switches and its minor page faults (from /proc)"
    echo
    echo "| round | Switchboard: attach all | CPU per stream | context switches per stream | page faults per stream | C: attach all | CPU per stream | context switches per stream | page faults per stream | CPU ÷ C's |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
    echo
    echo "**MEASURED**: Switchboard's CPU per attached stream = $(bench_median "${sb_cpu[@]}") µs, C's on libmicrohttpd = $(bench_median "${c_cpu[@]}") µs, ratio $(bench_median "${ratios[@]}") (rounds ${ratios[*]})"
} >"$out"
cat "$out" >&2
